import { withUnprintablesEscaped } from '../../common/validation/control-characters';

/**
 * A task id as every message quotes it: in single quotes, its control and format characters
 * written as escapes (`\u001b`, `\u202e`), as a client that prints the parsed detail would
 * otherwise obey them, or show `tao-x\u200b` as `tao-x`. An unknown id may hold any; a stored
 * one may too, if registered before `parseId` refused them. Printable ids (every id registered
 * since) are quoted as they are.
 */
export function quotedId(id: string): string {
  return `'${withUnprintablesEscaped(id)}'`;
}
