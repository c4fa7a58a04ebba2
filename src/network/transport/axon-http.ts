import { AxonTarget } from '../bittensor/dendrite';
import { MinerCallError } from './miner-failures';

/** The axon as the signed headers name it, from the metagraph's `http://host:port`. */
export function axonOf(miner: { hotkey: string; axonUrl: string }): AxonTarget {
  let url: URL;
  try {
    url = new URL(miner.axonUrl);
  } catch {
    throw new MinerCallError('network', `axon URL ${miner.axonUrl} is not a URL`);
  }
  const port = Number(url.port || 80);
  return { ip: url.hostname.replace(/^\[|\]$/g, ''), port, hotkey: miner.hotkey };
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
 * Reads the body, aborting as soon as it grows past `maxBytes` (never buffers more). With
 * `truncate`, keeps the first `maxBytes` instead of failing (error bodies).
 */
export async function readCapped(
  body: AsyncIterable<Buffer> & { destroy(): unknown },
  maxBytes: number,
  truncate: boolean,
  declared = 0,
): Promise<string> {
  if (declared > maxBytes && !truncate) {
    body.destroy();
    throw new MinerCallError('oversize', `response of ${declared} bytes exceeds ${maxBytes}`);
  }
  const chunks: Buffer[] = [];
  let total = 0;
  for await (const chunk of body) {
    total += chunk.byteLength;
    if (total > maxBytes) {
      body.destroy();
      if (truncate) break;
      throw new MinerCallError('oversize', `response exceeds ${maxBytes} bytes`);
    }
    chunks.push(chunk);
  }
  return Buffer.concat(chunks).toString('utf8');
}

/** An axon's error body is `{"message": "..."}`; shortened, as it is the miner's text. */
export function errorMessage(text: string): string {
  try {
    const { message } = JSON.parse(text) as { message?: unknown };
    if (typeof message === 'string') return message.slice(0, 200);
  } catch {
    // not JSON: fall through
  }
  return text.slice(0, 200) || 'no message';
}
