import { shownExcerpt } from '../../common/validation/control-characters';
import { AxonTarget } from '../bittensor/dendrite';
import { MinerCallError } from './miner-failures';

/** The axon as the signed headers name it, from the metagraph's `http://host:port`. */
export function axonOf(miner: { hotkey: string; axonUrl: string }): AxonTarget {
  const address = axonAddress(miner.axonUrl);
  if (!address)
    throw new MinerCallError('network', `axon URL ${miner.axonUrl} is not http://host:port`);
  return { ...address, hotkey: miner.hotkey };
}

const AXON_URL = /^http:\/\/(\[[0-9a-f:.]+\]|[a-z0-9.-]+):(\d{1,5})$/i;

/**
 * The host (an IPv6 address without its brackets) and port of `http://host:port`; undefined
 * for anything else. Axons speak plain HTTP on the port the chain lists, and every call goes to
 * `http://{host}:{port}/{synapse}` (dendrite.ts): an https URL, a missing port, a path,
 * credentials, a query or a fragment would be dropped or called as something else.
 */
export function axonAddress(text: string): { ip: string; port: number } | undefined {
  const match = AXON_URL.exec(text);
  const port = Number(match?.[2]);
  if (!match || port < 1 || port > 65_535) return undefined;
  try {
    return { ip: new URL(text).hostname.replace(/^\[|\]$/g, ''), port };
  } catch {
    return undefined;
  }
}

/**
 * The largest bucket claim (one bucket, or a call's buckets together) a miner is asked to send
 * in one answer: half of MINER_MAX_RESPONSE_BYTES, since contents travel as JSON strings inside
 * JSON (quotes escaped, non-ASCII as \u escapes). An honest miner asked for more would answer
 * past the cap and fail as `oversize`, at its own expense.
 */
export function largestClaimAsked(minerMaxResponseBytes: number): number {
  return minerMaxResponseBytes / 2;
}

/**
 * The cap on an answer for a bucket claimed larger than largestClaimAsked, read as it arrives
 * (only a spot check asks for one): twice the claim, by largestClaimAsked's rule, and a tenth
 * more (the claim's tolerance, withinSizeTolerance), with room for the synapse's other fields.
 */
export function largestAnswerFor(claimedBytes: number): number {
  return Math.ceil(claimedBytes * 2 * 1.1) + 64 * 1024;
}

/**
 * Reads the body, aborting as soon as it grows past `maxBytes` (never buffers more). With
 * `truncate`, keeps the first `maxBytes` instead of failing (error bodies).
 */
export async function readCapped(
  body: AsyncIterable<Buffer> & { destroy(): unknown },
  maxBytes: number,
  truncate: boolean,
  declared = 0,
): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of cappedChunks(body, maxBytes, truncate, declared)) chunks.push(chunk);
  return Buffer.concat(chunks).toString('utf8');
}

/**
 * The body's chunks until it grows past `maxBytes`, where it is aborted: then the chunks end
 * with `truncate`, else they fail `oversize`. A `declared` length past the cap fails at once.
 */
export async function* cappedChunks(
  body: AsyncIterable<Buffer> & { destroy(): unknown },
  maxBytes: number,
  truncate: boolean,
  declared = 0,
): AsyncGenerator<Buffer> {
  if (declared > maxBytes && !truncate) {
    body.destroy();
    throw new MinerCallError('oversize', `response of ${declared} bytes exceeds ${maxBytes}`);
  }
  let total = 0;
  for await (const chunk of body) {
    total += chunk.byteLength;
    if (total > maxBytes) {
      body.destroy();
      // The chunk's bytes up to the cap: dropped whole, a body sent in one large chunk (5 KB
      // of error text) left nothing, and was logged as "no message" (a log audit's finding).
      if (truncate) {
        const kept = chunk.byteLength - (total - maxBytes);
        if (kept > 0) yield chunk.subarray(0, kept);
        return;
      }
      throw new MinerCallError('oversize', `response exceeds ${maxBytes} bytes`);
    }
    yield chunk;
  }
}

/**
 * An axon's error body is `{"message": "..."}`, else its text: the miner's words, repeated in
 * logs and errors, so cut to 200 characters and with every control and format character
 * escaped. Raw, a miner's line break, ESC sequence or U+202E wrote a forged second line and
 * live terminal codes into the development log, and a reversed line into any (a log audit's
 * finding).
 */
export function errorMessage(text: string): string {
  let message = text;
  try {
    const parsed = JSON.parse(text) as { message?: unknown };
    if (typeof parsed?.message === 'string') message = parsed.message;
  } catch {
    // not JSON: its text
  }
  return shownExcerpt(message, 200) || 'no message';
}
