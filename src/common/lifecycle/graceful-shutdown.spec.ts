import { once } from 'node:events';
import { Agent, createServer, get, IncomingMessage, ServerResponse } from 'node:http';
import { AddressInfo, connect } from 'node:net';
import type { INestApplication, LoggerService } from '@nestjs/common';
import { until } from '../../../test/support/until';
import { statusSentBeforeClose, whenResponseDone } from '../response-done';
import {
  exitOnSignal,
  installGracefulShutdown,
  REPEATED_SIGNAL_WINDOW_MS,
} from './graceful-shutdown';
import type { ShutdownNotice } from './shutdown-notice';

const SIGNALS = ['SIGTERM', 'SIGINT', 'SIGHUP'] as const;
type SignalListener = (signal: NodeJS.Signals) => void;

/** The listeners added to the process's signals since `before` (only ours are ever called). */
function addedListeners(before: Map<string, SignalListener[]>) {
  return new Map(
    SIGNALS.map((signal) => [
      signal,
      (process.listeners(signal) as SignalListener[]).filter(
        (listener) => !before.get(signal)!.includes(listener),
      ),
    ]),
  );
}

/** The process's listeners of each signal now. */
function currentListeners(): Map<string, SignalListener[]> {
  return new Map(SIGNALS.map((signal) => [signal, process.listeners(signal) as SignalListener[]]));
}

/**
 * A loopback server whose /slow answers after `slowMs` and /never never answers, behind a fake
 * app that records its close; the graceful shutdown installed on it, with a fake exit and a
 * clock the test moves (`advance`).
 */
async function setUp(options: {
  timeoutMs: number;
  slowMs?: number;
  closeFails?: boolean;
  /** /never answers once the app closes (as a query whose miner calls the close aborts). */
  answerOnClose?: boolean;
}) {
  const events: string[] = [];
  const unanswered: ServerResponse[] = [];
  const server = createServer((request: IncomingMessage, response: ServerResponse) => {
    events.push(`request ${request.url}`);
    if (options.answerOnClose)
      whenResponseDone(response, (answered, status) =>
        events.push(
          `done ${request.url} ${answered ? status : (statusSentBeforeClose(response) ?? '-')}`,
        ),
      );
    if (request.url === '/never') {
      unanswered.push(response);
      return;
    }
    setTimeout(
      () => {
        if (request.url === '/slow') events.push('answered /slow');
        response.end('done');
      },
      request.url === '/slow' ? (options.slowMs ?? 0) : 0,
    );
  });
  // Node's own 5 s idle timeout would close a kept-alive connection the drain must close itself.
  server.keepAliveTimeout = 60_000;
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const port = (server.address() as AddressInfo).port;
  const app = {
    getHttpServer: () => server,
    close: () => {
      events.push('app closed');
      if (options.answerOnClose) for (const response of unanswered) response.end('too late');
      return options.closeFails ? Promise.reject(new Error('pool stuck')) : Promise.resolve();
    },
  } as unknown as INestApplication;
  const lines: string[] = [];
  const warnings: string[] = [];
  const logger = {
    log: (message: string) => lines.push(message),
    warn: (message: string) => {
      lines.push(message);
      warnings.push(message);
    },
    debug: (message: string) => lines.push(message),
    error: (message: string) => lines.push(message),
  } as LoggerService;
  let exited: (code: number) => void = () => undefined;
  const exit = new Promise<number>((resolve) => (exited = resolve));
  let clock = 1_000_000;
  const before = currentListeners();
  installGracefulShutdown(app, {
    timeoutMs: options.timeoutMs,
    logger,
    // Takes a while, as stopping the embedded Postgres does: the exit must wait for it.
    afterClose: async () => {
      await new Promise((resolve) => setTimeout(resolve, 20));
      events.push('after close');
    },
    exit: (code) => {
      events.push(`exit ${code}`);
      exited(code);
    },
    now: () => clock,
    notice: { begin: () => events.push('shutdown noticed') } as unknown as ShutdownNotice,
  });
  const listeners = addedListeners(before);
  const signal = (name: (typeof SIGNALS)[number]) => {
    for (const listener of listeners.get(name)!) listener(name);
  };
  return {
    port,
    events,
    lines,
    warnings,
    exit,
    signal,
    advance: (ms: number) => (clock += ms),
    /** Shuts down if the test did not, takes the listeners off the process and ends the rest. */
    tearDown: async () => {
      if (server.listening) signal('SIGTERM');
      for (const [signal, added] of listeners)
        for (const listener of added) process.removeListener(signal, listener);
      server.closeAllConnections();
      await exit;
    },
  };
}

type Harness = Awaited<ReturnType<typeof setUp>>;
let harness: Harness | undefined;
async function start(options: Parameters<typeof setUp>[0]): Promise<Harness> {
  harness = await setUp(options);
  return harness;
}
afterEach(async () => {
  await harness?.tearDown();
  harness = undefined;
});

/** GET `path` on `port`, answering the status and body, or the error that ended it. */
function fetchText(port: number, path: string, agent?: Agent): Promise<string> {
  return new Promise((resolve) => {
    get({ host: '127.0.0.1', port, path, agent }, (response) => {
      let body = '';
      response.on('data', (chunk: Buffer) => (body += chunk.toString()));
      response.on('end', () => resolve(`${response.statusCode} ${body}`));
    }).on('error', (error: NodeJS.ErrnoException) => resolve(error.code ?? error.message));
  });
}

/** GET `path` on `port` through `agent`, answering the status and the `Connection` header. */
function fetchConnection(port: number, path: string, agent: Agent): Promise<string> {
  return new Promise((resolve, reject) => {
    get({ host: '127.0.0.1', port, path, agent }, (response) => {
      response.resume();
      response.on('end', () => resolve(`${response.statusCode} ${response.headers.connection}`));
    }).on('error', reject);
  });
}

/** Whether a new connection to `port` is refused. */
function refused(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1', () => {
      socket.destroy();
      resolve(false);
    });
    socket.on('error', () => resolve(true));
  });
}

/** Waits until the server has received the request for `path`. */
async function untilRequested(events: string[], path: string): Promise<void> {
  await until(async () => events.includes(`request ${path}`) || undefined, 5000, 5);
}

/**
 * A shutdown with /slow in flight, in order: the index sync hears of it at the signal, before the
 * answer (no new miner calls while the requests drain); the app closes (the miner calls, the
 * pools) only once the answer is out.
 */
const SLOW_REQUEST_THEN_SHUTDOWN = [
  'request /slow',
  'shutdown noticed',
  'answered /slow',
  'app closed',
  'after close',
  'exit 0',
];

describe('installGracefulShutdown', () => {
  it('finishes the request in flight, refuses new connections, then closes the app and exits 0', async () => {
    const { port, events, lines, exit, signal } = await start({ timeoutMs: 5000, slowMs: 300 });
    const inFlight = fetchText(port, '/slow');
    await untilRequested(events, '/slow');
    signal('SIGTERM');
    expect(await refused(port)).toBe(true);
    expect(await inFlight).toBe('200 done');
    expect(await exit).toBe(0);
    expect(events).toEqual(SLOW_REQUEST_THEN_SHUTDOWN);
    expect(lines).toContain('SIGTERM: draining in-flight requests, then shutting down');
    expect(lines).toContainEqual(expect.stringMatching(/^HTTP server drained in \d+ ms$/));
    expect(lines).toContain('shutdown complete');
  });

  it('closes an idle keep-alive connection at once, and a busy one once its answer is out', async () => {
    const { port, events, lines, exit, signal } = await start({ timeoutMs: 10_000, slowMs: 300 });
    const idle = new Agent({ keepAlive: true });
    const busy = new Agent({ keepAlive: true });
    try {
      expect(await fetchText(port, '/fast', idle)).toBe('200 done');
      const answer = fetchText(port, '/slow', busy);
      await untilRequested(events, '/slow');
      const signalled = Date.now();
      signal('SIGTERM');
      expect(await answer).toBe('200 done');
      expect(await exit).toBe(0);
      // Not the 10 s timeout: a connection idle after its answer goes within the 100 ms sweep
      // (about 0.4 s in all; the bound leaves a loaded machine seconds to spare), none cut.
      expect(Date.now() - signalled).toBeLessThan(5000);
      expect(lines).toContainEqual(expect.stringMatching(/^HTTP server drained in \d+ ms$/));
    } finally {
      idle.destroy();
      busy.destroy();
    }
  });

  it('answers a request in flight with Connection: close once draining starts', async () => {
    const { port, events, exit, signal } = await start({ timeoutMs: 10_000, slowMs: 300 });
    const agent = new Agent({ keepAlive: true });
    try {
      // Before the signal, a kept-alive connection's answer says so.
      expect(await fetchConnection(port, '/fast', agent)).toBe('200 keep-alive');
      const answer = fetchConnection(port, '/slow', agent);
      await untilRequested(events, '/slow');
      signal('SIGTERM');
      // It said keep-alive, and a client or proxy sent its next request to a replica going away.
      expect(await answer).toBe('200 close');
      expect(await exit).toBe(0);
    } finally {
      agent.destroy();
    }
  });

  it('cuts a request still busy after the timeout, says so, then closes the app and exits 0', async () => {
    const { port, events, warnings, exit, signal } = await start({ timeoutMs: 300 });
    const stuck = fetchText(port, '/never');
    await untilRequested(events, '/never');
    const signalled = Date.now();
    signal('SIGTERM');
    expect(await stuck).toBe('ECONNRESET');
    expect(Date.now() - signalled).toBeGreaterThanOrEqual(290);
    // Cut at the timeout, not at some later moment; a loaded machine may fire it seconds late.
    expect(Date.now() - signalled).toBeLessThan(300 + 2000);
    expect(await exit).toBe(0);
    expect(events).toEqual([
      'request /never',
      'shutdown noticed',
      'app closed',
      'after close',
      'exit 0',
    ]);
    // A warning: answers their clients never got.
    expect(warnings).toContainEqual(
      expect.stringMatching(
        /^HTTP server drained in \d+ ms; cut 1 connection\(s\) still busy after 300 ms$/,
      ),
    );
  });

  // The request line then said `200 closed before the answer was complete` (an operator audit).
  it('counts an answer written after its connection was cut as no status sent', async () => {
    const { port, events, exit, signal } = await start({ timeoutMs: 300, answerOnClose: true });
    const stuck = fetchText(port, '/never');
    await untilRequested(events, '/never');
    signal('SIGTERM');
    expect(await stuck).toBe('ECONNRESET');
    expect(await exit).toBe(0);
    expect(events).toContain('done /never -');
  });

  it('exits 1 at once on a second signal, without waiting for the drain', async () => {
    const { port, events, lines, exit, signal, advance } = await start({ timeoutMs: 10_000 });
    void fetchText(port, '/never');
    await untilRequested(events, '/never');
    signal('SIGINT');
    advance(REPEATED_SIGNAL_WINDOW_MS + 1);
    signal('SIGHUP');
    expect(await exit).toBe(1);
    expect(lines).toContain('SIGHUP again: exiting without waiting');
    expect(events).not.toContain('app closed');
  });

  // Ctrl-C under `npm start`: the terminal signals node, and npm passes the same SIGINT on.
  it('takes a signal repeated within the window for the first one: drains, closes, exits 0', async () => {
    const { port, events, lines, exit, signal, advance } = await start({
      timeoutMs: 5000,
      slowMs: 300,
    });
    const inFlight = fetchText(port, '/slow');
    await untilRequested(events, '/slow');
    signal('SIGINT');
    advance(12);
    signal('SIGINT');
    advance(REPEATED_SIGNAL_WINDOW_MS - 12);
    signal('SIGTERM');
    expect(await inFlight).toBe('200 done');
    expect(await exit).toBe(0);
    expect(events).toEqual(SLOW_REQUEST_THEN_SHUTDOWN);
    expect(lines.filter((line) => line.includes('again'))).toEqual([
      `SIGINT again within ${REPEATED_SIGNAL_WINDOW_MS} ms: the same signal passed on, still draining`,
      `SIGTERM again within ${REPEATED_SIGNAL_WINDOW_MS} ms: the same signal passed on, still draining`,
    ]);
  });

  it('still exits at once on a press after the window, counted from the first signal', async () => {
    const { port, events, lines, exit, signal, advance } = await start({ timeoutMs: 10_000 });
    void fetchText(port, '/never');
    await untilRequested(events, '/never');
    signal('SIGINT');
    advance(10);
    signal('SIGINT');
    advance(REPEATED_SIGNAL_WINDOW_MS);
    signal('SIGINT');
    expect(await exit).toBe(1);
    expect(lines).toContain('SIGINT again: exiting without waiting');
    expect(events).not.toContain('app closed');
  });

  it('exits 1 and says why when closing the app fails', async () => {
    const { lines, exit, signal } = await start({ timeoutMs: 1000, closeFails: true });
    signal('SIGTERM');
    expect(await exit).toBe(1);
    expect(lines).toContain('shutdown failed: pool stuck');
  });
});

describe('exitOnSignal', () => {
  it('exits with 128 plus the signal number on SIGTERM, SIGINT and SIGHUP, until stopped', () => {
    const exit = jest.spyOn(process, 'exit').mockImplementation(() => undefined as never);
    const written = jest.spyOn(process.stderr, 'write').mockImplementation(() => true);
    const before = currentListeners();
    const stop = exitOnSignal();
    try {
      for (const [signal, added] of addedListeners(before))
        for (const listener of added) listener(signal);
      expect(exit.mock.calls).toEqual([[143], [130], [129]]);
      // Said on stderr: an exit with no line looked like a crash (a shutdown audit).
      expect(written.mock.calls.map(([line]) => line)).toEqual(
        ['SIGTERM', 'SIGINT', 'SIGHUP'].map(
          (signal) => `${signal}: exiting at once, nothing to drain yet\n`,
        ),
      );
    } finally {
      stop();
      exit.mockRestore();
      written.mockRestore();
    }
    // Stopped: none of its listeners is left on the process.
    expect([...addedListeners(before).values()].flat()).toEqual([]);
  });

  // The gateway's wait for the migration lock ends cleanly on a signal (gateway.ts).
  it('leaves a signal that `interrupt` takes to it, ignores the same one passed on within 1 s, and exits on one after', () => {
    const exit = jest.spyOn(process, 'exit').mockImplementation(() => undefined as never);
    let now = 1_000_000;
    const clock = jest.spyOn(Date, 'now').mockImplementation(() => now);
    const taken: string[] = [];
    let waiting = false;
    const before = currentListeners();
    const stop = exitOnSignal((signal) => {
      if (waiting) taken.push(signal);
      return waiting;
    });
    const send = (signal: (typeof SIGNALS)[number]) => {
      for (const listener of addedListeners(before).get(signal)!) listener(signal);
    };
    try {
      send('SIGINT');
      expect(exit.mock.calls).toEqual([[130]]);
      waiting = true;
      send('SIGTERM');
      now += REPEATED_SIGNAL_WINDOW_MS;
      send('SIGTERM');
      expect(taken).toEqual(['SIGTERM']);
      expect(exit.mock.calls).toEqual([[130]]);
      now += 1;
      send('SIGTERM');
      expect(taken).toEqual(['SIGTERM']);
      expect(exit.mock.calls).toEqual([[130], [143]]);
    } finally {
      stop();
      clock.mockRestore();
      exit.mockRestore();
    }
  });
});
