import { ApiContract, checkedFetch, ContractViolation } from './contract';

/** An app to load: where it listens and the document its answers are checked against. */
export interface LoadTarget {
  url: string;
  contract: ApiContract;
}

/** One request of a steady load: what was asked, when, how long it took and what came back. */
export interface LoadSample {
  name: string;
  startedAt: number;
  endedAt: number;
  status: number;
  requestId: string | null;
  body: unknown;
}

export interface LoadRequest {
  name: string;
  method?: 'GET' | 'POST';
  path: string;
  key: string;
  body?: unknown;
}

/** No response may take longer than this; a request still open then counts as a hang (0). */
const HANG_MS = 10_000;

/**
 * Keeps `workers` requests in flight against `target`, cycling through `requests`, until
 * `stop()`; every response is sampled. Bounded: one request per worker at a time, loopback only.
 * An answer the OpenAPI document does not describe ends the load; `stop()` throws it.
 */
export function steadyLoad(
  target: LoadTarget,
  requests: LoadRequest[],
  workers: number,
): { samples: LoadSample[]; stop(): Promise<LoadSample[]> } {
  const samples: LoadSample[] = [];
  let stopped = false;
  let violation: ContractViolation | undefined;
  const worker = async (offset: number) => {
    for (let index = offset; !stopped; index += 1) {
      const request = requests[index % requests.length];
      try {
        samples.push(await send(target, request));
      } catch (error) {
        violation ??= error as ContractViolation;
        stopped = true;
      }
    }
  };
  const running = Array.from({ length: workers }, (_, offset) => worker(offset));
  return {
    samples,
    async stop() {
      stopped = true;
      await Promise.all(running);
      if (violation) throw violation;
      return samples;
    },
  };
}

/** Sends one request; no answer is a sample with status 0, an undocumented answer throws. */
export async function send(target: LoadTarget, request: LoadRequest): Promise<LoadSample> {
  const startedAt = Date.now();
  try {
    const response = await checkedFetch(target.contract, `${target.url}${request.path}`, {
      method: request.method ?? 'GET',
      headers: { 'X-API-Key': request.key, 'Content-Type': 'application/json' },
      body: request.body === undefined ? undefined : JSON.stringify(request.body),
      signal: AbortSignal.timeout(HANG_MS),
    });
    const text = await response.text();
    return {
      name: request.name,
      startedAt,
      endedAt: Date.now(),
      status: response.status,
      requestId: response.headers.get('x-request-id'),
      body: text.length > 0 ? (JSON.parse(text) as unknown) : null,
    };
  } catch (error) {
    if (error instanceof ContractViolation) throw error;
    return {
      name: request.name,
      startedAt,
      endedAt: Date.now(),
      status: 0,
      requestId: null,
      body: String(error),
    };
  }
}
