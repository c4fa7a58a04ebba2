/**
 * X post ids are snowflakes: the milliseconds since X's epoch, shifted left 22 bits above a
 * worker and sequence number (twitter/snowflake, IdWorker). A post's id therefore holds the
 * moment it was posted, which no miner can change without naming another post. Ids handed out
 * before November 2010 were counted up one by one and hold no time.
 */

/** X's snowflake epoch, 2010-11-04T01:42:54.657Z. */
const X_EPOCH_MS = 1_288_834_974_657n;
const TIME_SHIFT = 22n;
/** The first snowflake id; smaller ids were counted up and hold no time. */
const FIRST_SNOWFLAKE = 29_700_859_247n;
/** A post id as item-uri.ts reads it from a uri: decimal digits, at most 20 of them. */
const POST_ID = /^\d{1,20}$/;

/** When the post was made, read from its id; undefined for an id that holds no time. */
export function xPostTime(id: string): Date | undefined {
  if (!POST_ID.test(id)) return undefined;
  const value = BigInt(id);
  if (value < FIRST_SNOWFLAKE) return undefined;
  return new Date(Number((value >> TIME_SHIFT) + X_EPOCH_MS));
}

/**
 * The id of a post made at `time`, `sequence` (its low 22 bits) telling apart posts of one
 * millisecond; xPostTime gives `time` back to the millisecond. For the devnet's corpus.
 */
export function xPostId(time: Date, sequence: number): string {
  const milliseconds = BigInt(time.getTime()) - X_EPOCH_MS;
  return ((milliseconds << TIME_SHIFT) | BigInt(sequence & 0x3fffff)).toString();
}
