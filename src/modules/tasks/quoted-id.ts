import { shownExcerpt } from '../../common/validation/control-characters';

/**
 * A task id as every message quotes it: in single quotes, its control and format characters
 * written as escapes (`\u001b`, `\u202e`), as a client that prints the parsed detail would
 * otherwise obey them, or show `tao-x\u200b` as `tao-x`. An unknown id may hold any; a stored
 * one may too, if registered before `parseId` refused them. Printable ids (every id registered
 * since) are quoted as they are.
 */
export function quotedId(id: string): string {
  return quotedStart(id, Infinity);
}

/**
 * An id from a path (never length-checked) as quotedId quotes it, by its first `max` characters,
 * cut between code points and marked as cut (`…`).
 */
export function quotedStart(id: string, max: number): string {
  return `'${shownExcerpt(id, max)}'`;
}
