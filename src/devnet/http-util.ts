import { IncomingMessage, ServerResponse } from 'node:http';

/** Minimal HTTP plumbing for the simulated miners (no framework on purpose: tiny and fast). */

export function sendJson(response: ServerResponse, status: number, body: unknown): void {
  sendText(response, status, JSON.stringify(body));
}

/** Always labelled JSON, even when it is not (that is the point of the malformed fault). */
export function sendText(response: ServerResponse, status: number, text: string): void {
  response.writeHead(status, {
    'content-type': 'application/json',
    'content-length': Buffer.byteLength(text),
  });
  response.end(text);
}

export type BodyResult =
  { kind: 'text'; text: string } | { kind: 'too-large' } | { kind: 'aborted' };

/** Reads the whole request body; stops keeping it past `maxBytes` but drains it to answer 413. */
export function readBody(request: IncomingMessage, maxBytes: number): Promise<BodyResult> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let size = 0;
    request.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size <= maxBytes) chunks.push(chunk);
    });
    request.on('error', () => resolve({ kind: 'aborted' }));
    request.on('close', () => {
      if (!request.complete) resolve({ kind: 'aborted' });
    });
    request.on('end', () => {
      if (size > maxBytes) return resolve({ kind: 'too-large' });
      resolve({ kind: 'text', text: Buffer.concat(chunks).toString('utf8') });
    });
  });
}

/** Resolves when the response can take more data, or when its connection is gone. */
function drained(response: ServerResponse): Promise<void> {
  return new Promise((resolve) => {
    const done = (): void => {
      response.off('drain', done);
      response.off('close', done);
      resolve();
    };
    response.on('drain', done);
    response.on('close', done);
  });
}

/**
 * Streams `prefix element0,element1,... suffix` with chunked encoding until more than
 * `minBytes` went out: a body that is valid JSON but far too large, sent as fast as the client
 * reads it. Stops early when the client hangs up.
 */
export async function streamJsonArray(
  response: ServerResponse,
  prefix: string,
  element: (index: number) => string,
  suffix: string,
  minBytes: number,
): Promise<void> {
  response.writeHead(200, { 'content-type': 'application/json' });
  let sent = 0;
  let index = 0;
  const write = async (text: string): Promise<void> => {
    sent += Buffer.byteLength(text);
    if (!response.write(text)) await drained(response);
  };
  await write(prefix);
  while (sent < minBytes && !response.destroyed) {
    const parts: string[] = [];
    let chunkBytes = 0;
    while (chunkBytes < 64 * 1024) {
      const text = (index === 0 ? '' : ',') + element(index++);
      parts.push(text);
      chunkBytes += text.length;
    }
    await write(parts.join(''));
  }
  if (!response.destroyed) response.end(suffix);
}
