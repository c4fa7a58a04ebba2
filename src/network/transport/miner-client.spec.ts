import {
  createServer,
  IncomingHttpHeaders,
  IncomingMessage,
  Server,
  ServerResponse,
} from 'node:http';
import { AddressInfo } from 'node:net';
import { MetricsService } from '../common/metrics/metrics.service';
import { loadConfig } from '../config/load-config';
import { MinerCallError, MinerClient, MinerFailureReason } from './miner-client';

const HOTKEY = '5GatewayUnitTestHotkey';
const MAX_RESPONSE_BYTES = 10 * 1024;
const BREAKER_FAILURES = 3;
const BREAKER_COOLDOWN_MS = 300;
/** One call at a time per miner, so the bulkhead queue holds 4 (concurrency × 4). */
const CONCURRENCY = 1;

interface ReceivedRequest {
  method: string | undefined;
  path: string;
  headers: IncomingHttpHeaders;
  body: string;
}

/**
 * A fake miner whose behaviour is chosen by the first segment of the path, so that each test
 * can point a miner's axon URL at `http://127.0.0.1:<port>/<behaviour>`.
 */
class FakeMiner {
  readonly received: ReceivedRequest[] = [];
  failing = true;
  private readonly server: Server = createServer((request, response) => {
    void this.handle(request, response);
  });

  async start(): Promise<string> {
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  /** Ends hung responses too: they would keep jest from exiting. */
  async stop(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  hits(behaviour: string): number {
    return this.received.filter((request) => request.path.startsWith(`/${behaviour}/`)).length;
  }

  private async handle(request: IncomingMessage, response: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const chunk of request) chunks.push(chunk as Buffer);
    const path = request.url ?? '';
    const body = Buffer.concat(chunks).toString('utf8');
    this.received.push({ method: request.method, path, headers: request.headers, body });
    const [, behaviour, argument] = path.split('/');
    switch (behaviour) {
      case 'echo':
        return json(response, 200, { data: [], received: JSON.parse(body) as unknown });
      case 'error':
      case 'counted':
        return json(response, 500, { error: 'miner failure' });
      case 'flaky':
        return this.failing
          ? json(response, 500, { error: 'miner failure' })
          : json(response, 200, { data: [] });
      case 'garbage':
        response.writeHead(200, { 'content-type': 'application/json' });
        return void response.end('<html><body>Bad gateway</body></html>');
      case 'json-of':
        return json(response, 200, '"'.padEnd(Number(argument) - 1, 'a') + '"');
      case 'stream':
        return stream(response, 50 * 1024);
      case 'declared':
        // Promises far more than the cap, then stalls: only the declared length can tell.
        response.writeHead(200, { 'content-type': 'application/json', 'content-length': 50_000 });
        return void response.write('{"data": [');
      case 'slow':
        return void setTimeout(() => json(response, 200, { data: [] }), 60);
      case 'hang':
        return;
      default:
        return json(response, 404, { error: 'unknown path' });
    }
  }
}

function json(response: ServerResponse, status: number, value: unknown): void {
  const text = typeof value === 'string' ? value : JSON.stringify(value);
  response.writeHead(status, {
    'content-type': 'application/json',
    'content-length': Buffer.byteLength(text),
  });
  response.end(text);
}

/** Chunked (no Content-Length): only counting the bytes as they arrive can catch it. */
function stream(response: ServerResponse, bytes: number): void {
  response.on('error', () => undefined);
  response.writeHead(200, { 'content-type': 'application/json' });
  response.write('["');
  for (let sent = 0; sent < bytes; sent += 1024) response.write('x'.repeat(1024));
  response.end('"]');
}

async function failureOf(call: Promise<unknown>): Promise<MinerFailureReason> {
  try {
    await call;
  } catch (error) {
    if (error instanceof MinerCallError) return error.reason;
    throw error;
  }
  throw new Error('the call succeeded');
}

describe(MinerClient.name, () => {
  const miner = new FakeMiner();
  let baseUrl: string;
  let client: MinerClient;
  let nextUid = 1;
  /** Each test talks to its own miner uid: breakers and bulkheads are kept per miner. */
  const at = (behaviour: string) => ({ uid: nextUid++, axonUrl: `${baseUrl}/${behaviour}` });

  beforeAll(async () => {
    baseUrl = await miner.start();
  });

  beforeEach(() => {
    client = new MinerClient(
      loadConfig({
        VALIDATOR_HOTKEY: HOTKEY,
        MINER_MAX_RESPONSE_BYTES: String(MAX_RESPONSE_BYTES),
        MINER_BREAKER_FAILURES: String(BREAKER_FAILURES),
        MINER_BREAKER_COOLDOWN_MS: String(BREAKER_COOLDOWN_MS),
        MINER_CONCURRENCY: String(CONCURRENCY),
      }),
      new MetricsService(),
    );
  });

  afterAll(async () => {
    await miner.stop();
  });

  it('posts the JSON body with the validator hotkey header and returns the parsed answer', async () => {
    const body = { source: 'X', usernames: [], keywords: ['#bitcoin'], limit: 10 };

    const reply = await client.call(at('echo'), 'OnDemandRequest', body, 2_000);

    expect(reply.body).toEqual({ data: [], received: body });
    expect(reply.latencyMs).toBeGreaterThan(0);
    const request = miner.received.at(-1)!;
    expect(request.method).toBe('POST');
    expect(request.path).toBe('/echo/OnDemandRequest');
    expect(request.headers['x-validator-hotkey']).toBe(HOTKEY);
    expect(request.headers['content-type']).toBe('application/json');
    expect(JSON.parse(request.body)).toEqual(body);
  });

  it('joins an axon url ending in slashes and the endpoint with a single slash', async () => {
    const target = at('echo');

    await client.call({ ...target, axonUrl: `${target.axonUrl}//` }, 'GetMinerIndex', {}, 2_000);

    expect(miner.received.at(-1)!.path).toBe('/echo/GetMinerIndex');
  });

  it('classifies an HTTP 500 as http_error', async () => {
    expect(await failureOf(client.call(at('error'), 'OnDemandRequest', {}, 2_000))).toBe(
      'http_error',
    );
  });

  it('classifies a body that is not JSON as malformed', async () => {
    expect(await failureOf(client.call(at('garbage'), 'OnDemandRequest', {}, 2_000))).toBe(
      'malformed',
    );
  });

  it('accepts a body exactly at the size cap', async () => {
    const reply = await client.call(
      at(`json-of/${MAX_RESPONSE_BYTES}`),
      'OnDemandRequest',
      {},
      2_000,
    );

    expect(reply.body).toHaveLength(MAX_RESPONSE_BYTES - 2);
  });

  it('classifies a body one byte over the cap as oversize', async () => {
    const call = client.call(at(`json-of/${MAX_RESPONSE_BYTES + 1}`), 'OnDemandRequest', {}, 2_000);

    expect(await failureOf(call)).toBe('oversize');
  });

  it('classifies a streamed body growing past the cap as oversize', async () => {
    expect(await failureOf(client.call(at('stream'), 'OnDemandRequest', {}, 2_000))).toBe(
      'oversize',
    );
  });

  it('refuses a declared Content-Length over the cap without waiting for the body', async () => {
    const started = performance.now();

    const reason = await failureOf(client.call(at('declared'), 'OnDemandRequest', {}, 1_500));

    expect(reason).toBe('oversize');
    expect(performance.now() - started).toBeLessThan(1_000);
  });

  // The reason is not asserted: cockatiel 3.2.1's isTaskCancelledError misclassifies timeouts
  // (reported separately); what must hold regardless is that the call gives up on time.
  it('gives up on a miner that never answers after the given time', async () => {
    const started = performance.now();

    await expect(client.call(at('hang'), 'OnDemandRequest', {}, 200)).rejects.toBeInstanceOf(
      MinerCallError,
    );

    const elapsed = performance.now() - started;
    expect(elapsed).toBeGreaterThanOrEqual(190);
    expect(elapsed).toBeLessThan(450);
  });

  it('classifies a refused connection as network', async () => {
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const { port } = closed.address() as AddressInfo;
    await new Promise<void>((resolve) => closed.close(() => resolve()));

    const call = client.call(
      { uid: nextUid++, axonUrl: `http://127.0.0.1:${port}` },
      'GetMinerIndex',
      {},
      2_000,
    );

    expect(await failureOf(call)).toBe('network');
  });

  describe('circuit breaker', () => {
    it(`opens after ${BREAKER_FAILURES} consecutive failures and then fails fast without calling the miner`, async () => {
      const target = at('counted');
      const changes: [number, boolean][] = [];
      client.onCircuitChange((uid, open) => changes.push([uid, open]));
      const hitsBefore = miner.hits('counted');

      for (let call = 1; call < BREAKER_FAILURES; call++) {
        expect(await failureOf(client.call(target, 'OnDemandRequest', {}, 2_000))).toBe(
          'http_error',
        );
        expect(client.isCircuitOpen(target.uid)).toBe(false);
      }
      expect(await failureOf(client.call(target, 'OnDemandRequest', {}, 2_000))).toBe('http_error');

      expect(client.isCircuitOpen(target.uid)).toBe(true);
      expect(changes).toEqual([[target.uid, true]]);
      const started = performance.now();
      expect(await failureOf(client.call(target, 'OnDemandRequest', {}, 2_000))).toBe(
        'circuit_open',
      );
      expect(performance.now() - started).toBeLessThan(50);
      expect(miner.hits('counted') - hitsBefore).toBe(BREAKER_FAILURES);
    });

    it('keeps the circuits of other miners closed', async () => {
      const failing = at('counted');
      const healthy = at('echo');

      for (let call = 0; call < BREAKER_FAILURES; call++) {
        await failureOf(client.call(failing, 'OnDemandRequest', {}, 2_000));
      }

      expect(client.isCircuitOpen(failing.uid)).toBe(true);
      expect(client.isCircuitOpen(healthy.uid)).toBe(false);
      await expect(client.call(healthy, 'OnDemandRequest', {}, 2_000)).resolves.toBeDefined();
    });

    it('counts only consecutive failures: a success in between starts the count again', async () => {
      const target = at('flaky');
      miner.failing = true;
      for (let call = 1; call < BREAKER_FAILURES; call++) {
        await failureOf(client.call(target, 'OnDemandRequest', {}, 2_000));
      }
      miner.failing = false;
      await client.call(target, 'OnDemandRequest', {}, 2_000);
      miner.failing = true;

      for (let call = 1; call < BREAKER_FAILURES; call++) {
        await failureOf(client.call(target, 'OnDemandRequest', {}, 2_000));
      }

      expect(client.isCircuitOpen(target.uid)).toBe(false);
    });

    it('counts calls that time out as failures', async () => {
      const target = at('hang');

      for (let call = 0; call < BREAKER_FAILURES; call++) {
        await expect(client.call(target, 'OnDemandRequest', {}, 100)).rejects.toBeInstanceOf(
          MinerCallError,
        );
      }

      expect(client.isCircuitOpen(target.uid)).toBe(true);
    });

    it('closes again after the cooldown once the miner answers, telling the listeners', async () => {
      const target = at('flaky');
      const changes: [number, boolean][] = [];
      client.onCircuitChange((uid, open) => changes.push([uid, open]));
      miner.failing = true;
      for (let call = 0; call < BREAKER_FAILURES; call++) {
        await failureOf(client.call(target, 'OnDemandRequest', {}, 2_000));
      }
      miner.failing = false;
      expect(await failureOf(client.call(target, 'OnDemandRequest', {}, 2_000))).toBe(
        'circuit_open',
      );

      await new Promise((resolve) => setTimeout(resolve, BREAKER_COOLDOWN_MS + 50));
      await client.call(target, 'OnDemandRequest', {}, 2_000);

      expect(client.isCircuitOpen(target.uid)).toBe(false);
      expect(changes).toEqual([
        [target.uid, true],
        [target.uid, false],
      ]);
    });
  });

  describe('bulkhead', () => {
    const capacity = CONCURRENCY + CONCURRENCY * 4;

    // The reason (`busy`) is not asserted here: see the cockatiel note on the timeout test.
    it('refuses calls beyond the concurrency and its queue without reaching the miner', async () => {
      const target = at('slow');
      const hitsBefore = miner.hits('slow');

      const results = await Promise.allSettled(
        Array.from({ length: capacity + BREAKER_FAILURES }, () =>
          client.call(target, 'OnDemandRequest', {}, 2_000),
        ),
      );

      expect(results.map((result) => result.status)).toEqual([
        ...Array<string>(capacity).fill('fulfilled'),
        ...Array<string>(BREAKER_FAILURES).fill('rejected'),
      ]);
      for (const result of results.slice(capacity)) {
        expect(result.status === 'rejected' && result.reason).toBeInstanceOf(MinerCallError);
      }
      expect(miner.hits('slow') - hitsBefore).toBe(capacity);
    });

    it('does not open the circuit for calls refused as busy', async () => {
      const target = at('slow');

      await Promise.allSettled(
        Array.from({ length: capacity + BREAKER_FAILURES }, () =>
          client.call(target, 'OnDemandRequest', {}, 2_000),
        ),
      );

      expect(client.isCircuitOpen(target.uid)).toBe(false);
      await expect(client.call(target, 'OnDemandRequest', {}, 2_000)).resolves.toBeDefined();
    });

    it('keeps a separate bulkhead per miner', async () => {
      const first = at('slow');
      const second = at('slow');

      const results = await Promise.allSettled([
        ...Array.from({ length: capacity }, () => client.call(first, 'OnDemandRequest', {}, 2_000)),
        ...Array.from({ length: capacity }, () =>
          client.call(second, 'OnDemandRequest', {}, 2_000),
        ),
      ]);

      expect(results.every((result) => result.status === 'fulfilled')).toBe(true);
    });
  });
});
