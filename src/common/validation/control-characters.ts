/**
 * Unicode's control characters (C0, DEL, C1) and the line and paragraph separators: what a
 * terminal, a log viewer or a text field acts on (ESC starts a command, CR overwrites the line)
 * rather than shows. Task ids may hold none (desirability-fields.ts, `parseId`).
 */
export const CONTROL_CHARACTER = /[\p{Cc}\u2028\u2029]/u;
const CONTROL_CHARACTERS = new RegExp(CONTROL_CHARACTER.source, 'gu');

/**
 * `text` with each control character written as its escape (`\u0000`, `\u001b`), for a message
 * that quotes what a client sent: JSON escapes them on the wire, but a client that shows the
 * parsed detail would print them raw. Printable text (every valid task id) is unchanged.
 */
export function withControlsEscaped(text: string): string {
  return text.replace(
    CONTROL_CHARACTERS,
    (character) => `\\u${character.charCodeAt(0).toString(16).padStart(4, '0')}`,
  );
}
