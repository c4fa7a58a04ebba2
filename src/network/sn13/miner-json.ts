import { SynapseName } from '../../common/synapse-names';
import { MAX_INDEX_BUCKETS } from '../protocol';

/**
 * Every JSON.parse of a miner's text goes through `parseMinerJson`, with a bound on the values
 * the text may hold. The byte caps (axon-http.ts) bound bytes, not what parsing makes of them:
 * `{},` is 3 bytes and about 64 of heap, `0,` 2 bytes and 8 of heap plus the array's, so 95 MiB
 * of `[{},{},…]` in an index answer held about 2 GB after the call. Honest answers carry long
 * strings (the index, each record's JSON), few values a byte. Sizing: docs/decisions.md,
 * "Values in a miner's answer are bounded too".
 */

/** GetMinerIndex's answer: the synapse's own fields (a few dozen) around the index's string. */
export const MAX_INDEX_ANSWER_VALUES = 10_000;

/**
 * The index itself (`compressed_index_serialized`): an entry of k buckets holds 4 + 2k values
 * (3 containers, its commas, the comma after it), and there are at most MAX_INDEX_BUCKETS
 * buckets in at most as many entries: 6 a bucket at most, and the `sources` around them.
 */
export const MAX_INDEX_VALUES = 6 * MAX_INDEX_BUCKETS + 1_000;

/**
 * Other answers (entities, contents) hold at most one value per this many bytes of their cap:
 * an honest entity is 8 values in 250 bytes or more (its record travels as one string), a
 * content one value in a record's 100 or more.
 */
export const ANSWER_BYTES_PER_VALUE = 16;

/** One stored record (an X post, a Reddit post or comment): a few dozen fields and short lists. */
export const MAX_RECORD_VALUES = 10_000;

/** The most values an answer of `synapse` may hold, read under a cap of `maxBytes`. */
export function maxAnswerValues(synapse: SynapseName, maxBytes: number): number {
  return synapse === 'GetMinerIndex'
    ? MAX_INDEX_ANSWER_VALUES
    : Math.floor(maxBytes / ANSWER_BYTES_PER_VALUE);
}

/** A miner's text that is not JSON, or holds more values than its bound. */
export class UnreadableJsonError extends Error {
  override readonly name = 'UnreadableJsonError';
}

/** JSON.parse of a miner's text, refused unread past `maxValues` values (see above). */
export function parseMinerJson(text: string, maxValues: number): unknown {
  if (holdsMoreValues(text, maxValues))
    throw new UnreadableJsonError(`holds more than ${maxValues} values`);
  try {
    return JSON.parse(text) as unknown;
  } catch {
    throw new UnreadableJsonError('is not JSON');
  }
}

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const COMMA = 0x2c;
const OPEN_BRACE = 0x7b;
const OPEN_BRACKET = 0x5b;

/**
 * Counts, outside strings, the containers (`{`, `[`) and the commas between values (the
 * values counted here and in the bounds above): every value but a container's first is
 * preceded by a comma, so a text of n holds at most n + 1 values. One pass of charCodeAt, a
 * part of JSON.parse's time (measured in the decision named above). Text that is not JSON is
 * counted as far as it goes and left to JSON.parse to refuse.
 */
export function holdsMoreValues(text: string, maxValues: number): boolean {
  let count = 0;
  let inString = false;
  const length = text.length;
  for (let i = 0; i < length; i++) {
    const code = text.charCodeAt(i);
    if (inString) {
      if (code === BACKSLASH) i++;
      else if (code === QUOTE) inString = false;
    } else if (code === QUOTE) {
      inString = true;
    } else if (code === COMMA || code === OPEN_BRACE || code === OPEN_BRACKET) {
      if (++count > maxValues) return true;
    }
  }
  return false;
}
