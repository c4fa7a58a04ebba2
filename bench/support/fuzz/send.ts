import { Agent, IncomingHttpHeaders, request } from 'node:http';

export interface RawRequest {
  method: string;
  path: string;
  headers: Record<string, string | string[]>;
  body?: string;
}

export interface RawResponse {
  status: number;
  headers: IncomingHttpHeaders;
  body: Buffer;
}

/**
 * One request with node:http rather than fetch: fetch normalises what a fuzzer wants to send
 * as is (duplicate headers, odd methods, unusual paths). Fails after `timeoutMs` without an
 * answer: a hang is a finding, not a stuck run.
 */
export function send(
  baseUrl: string,
  raw: RawRequest,
  agent: Agent,
  timeoutMs: number,
): Promise<RawResponse> {
  const url = new URL(baseUrl);
  const payload = raw.body === undefined ? undefined : Buffer.from(raw.body, 'utf8');
  const headers = { ...raw.headers };
  if (payload) headers['content-length'] = String(payload.length);
  return new Promise((resolve, reject) => {
    const outgoing = request(
      {
        agent,
        host: url.hostname,
        port: url.port,
        method: raw.method,
        path: raw.path,
        headers,
        signal: AbortSignal.timeout(timeoutMs),
      },
      (incoming) => {
        const chunks: Buffer[] = [];
        incoming.on('data', (chunk: Buffer) => chunks.push(chunk));
        incoming.on('end', () =>
          resolve({
            status: incoming.statusCode ?? 0,
            headers: incoming.headers,
            body: Buffer.concat(chunks),
          }),
        );
        incoming.on('error', reject);
      },
    );
    outgoing.on('error', (error) =>
      reject(error.name === 'AbortError' ? new Error(`no answer within ${timeoutMs} ms`) : error),
    );
    outgoing.end(payload);
  });
}
