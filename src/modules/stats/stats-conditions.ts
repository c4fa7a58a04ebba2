import { createHash } from 'node:crypto';
import { namesTag } from '../../common/http/entity-tags';
import { API_VERSION } from '../../common/version';

/*
 * The statistics' conditional requests (RFC 9110 §13): each answer's entity tag, and the 304
 * when the request's If-None-Match names it. Pure: StatsService answers by them.
 */

/** An answer with its tag, or only the tag when the client holds the answer (a 304). */
export type Conditional<T> = { status: 200; tag: string; answer: T } | { status: 304; tag: string };

/**
 * A weak entity tag (RFC 9110 §8.8.3) over what determines an answer: `request`, the operation
 * and its normalized parameters (with the aggregates' version, read from Postgres, so the same
 * on every replica), and `body`, the answer itself when nothing less determines it. Weak: it
 * promises the same data, not the same bytes (an answer read just after a write of the totals
 * may be tagged with the version before it; docs/decisions.md, "Miner index and statistics").
 * The interface version is part of it, so that an answer of another shape is not taken for the
 * one a client holds.
 */
export function answerTag(request: readonly (string | number)[], body?: string): string {
  const hash = createHash('sha256').update(JSON.stringify([API_VERSION, ...request]));
  if (body !== undefined) hash.update(body);
  return `W/"${hash.digest('hex').slice(0, 32)}"`;
}

/** The 304 when If-None-Match names `tag` (weak comparison, §13.1.2), else the answer computed. */
export async function conditionally<T>(
  tag: string,
  ifNoneMatch: string | undefined,
  compute: () => Promise<T>,
): Promise<Conditional<T>> {
  if (ifNoneMatch !== undefined && namesTag(ifNoneMatch, tag, 'weak')) return { status: 304, tag };
  return { status: 200, tag, answer: await compute() };
}
