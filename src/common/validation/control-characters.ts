import { ValidateBy, ValidationOptions } from 'class-validator';
import { firstCharacters } from '../characters';

/**
 * Unicode's control characters (C0, DEL, C1) and the line and paragraph separators: what a
 * terminal, a log viewer or a text field acts on (ESC starts a command, CR overwrites the line)
 * rather than shows. Task ids may hold none (desirability-fields.ts, `parseId`).
 */
export const CONTROL_CHARACTER = /[\p{Cc}\u2028\u2029]/u;

/**
 * Unicode's format characters (Cf): invisible, yet they change what text around them looks like
 * (U+202E shows the rest of the line reversed) or make two texts look alike (`tao-x\u200b` is
 * shown as `tao-x`). Task ids may hold none either (docs/decisions.md, "Registration under
 * concurrency and submission bounds").
 */
export const FORMAT_CHARACTER = /\p{Cf}/u;

/**
 * The format characters but the joiners, ZWNJ (U+200C) and ZWJ (U+200D), which emoji sequences
 * (`👩‍💻`) and scripts such as Persian and the Indic ones are written with: what a name people
 * read, not one code looks up, may not hold.
 */
export const HIDDEN_FORMAT_CHARACTER = /(?![\u200c\u200d])\p{Cf}/u;

const UNPRINTABLE_CHARACTERS = /[\p{Cc}\p{Cf}\u2028\u2029]/gu;

/**
 * `text` with each control and format character written as its escape (`\u0000`, `\u001b`,
 * `\u202e`; one beyond U+FFFF as its two UTF-16 halves, as JSON writes it), for a message that
 * quotes what a client sent: JSON escapes control characters on the wire, but a client that
 * shows the parsed detail would print them raw, and no format character is escaped by JSON at
 * all. Printable text (every valid task id) is unchanged.
 */
export function withUnprintablesEscaped(text: string): string {
  return text.replace(UNPRINTABLE_CHARACTERS, (character) =>
    Array.from(
      { length: character.length },
      (_, index) => `\\u${character.charCodeAt(index).toString(16).padStart(4, '0')}`,
    ).join(''),
  );
}

/**
 * The first `max` characters of a text someone else wrote (a miner's error message, an index's
 * source key), escaped as `withUnprintablesEscaped` does, ending in `…` when it was cut: a
 * reader of the log line can tell an excerpt from the whole message.
 */
export function shownExcerpt(text: string, max: number): string {
  const cut = firstCharacters(text, max);
  return withUnprintablesEscaped(cut) + (cut === text ? '' : '…');
}

/**
 * A name people read (an API key's): no control character, and no format character but the
 * joiners (HIDDEN_FORMAT_CHARACTER). `\u202eabc` was accepted and listed reversed, `ci-bot\u200b`
 * would list as `ci-bot` (a fuzz audit's finding). Reported as a pydantic validator's
 * ValueError, `value_error`, as a task id's characters are.
 */
export const PrintableName = (options?: ValidationOptions) =>
  ValidateBy(
    {
      name: 'printableName',
      validator: {
        validate: (value: unknown) =>
          typeof value === 'string' &&
          !CONTROL_CHARACTER.test(value) &&
          !HIDDEN_FORMAT_CHARACTER.test(value),
        defaultMessage: () =>
          'name must be printable: no control characters (CR, LF, TAB, …), bidi controls or ' +
          'invisible format characters (zero-width space, …)',
      },
    },
    options,
  );
