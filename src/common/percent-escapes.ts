import { isUtf8 } from 'node:buffer';

/**
 * Whether decodeURIComponent reads a run of percent escapes (`%e2%82%ac`) without throwing: it
 * throws a URIError on a run that is not UTF-8 (`%ff`), and an exception per run is costly
 * (250,000 of them in a 1 MB body were seconds of CPU, before authentication: an audit's
 * finding). A run without an escape of `%80` or above is ASCII, which always reads.
 */
export function isUtf8Run(run: string): boolean {
  return !/%[89a-f]/i.test(run) || isUtf8(bytesOfRun(run));
}

/** The bytes a run of percent escapes stands for. */
export function bytesOfRun(run: string): Buffer {
  return Buffer.from(run.replace(/%/g, ''), 'hex');
}

/** Whether decodeURIComponent reads the text without throwing: every `%` starts a UTF-8 escape. */
export function isPercentDecodable(text: string): boolean {
  if (/%(?![0-9a-f]{2})/i.test(text)) return false;
  return (text.match(/(?:%[0-9a-f]{2})+/gi) ?? []).every(isUtf8Run);
}
