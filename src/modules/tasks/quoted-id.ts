import { withControlsEscaped } from '../../common/validation/control-characters';

/**
 * A task id as every message quotes it: in single quotes, its control characters written as
 * escapes (`\u001b`), as a client that prints the parsed detail would otherwise obey them. An
 * unknown id may hold any; a stored one may too, if registered before `parseId` refused them.
 * Printable ids (every id registered since) are quoted as they are.
 */
export function quotedId(id: string): string {
  return `'${withControlsEscaped(id)}'`;
}
