import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { constants } from 'node:os';
import type { INestApplication, LoggerService } from '@nestjs/common';
import { cutOffBeforeItsHead } from '../response-done';
import type { ShutdownNotice } from './shutdown-notice';

export interface GracefulShutdownOptions {
  /** How long in-flight requests may run once draining starts; then their sockets are cut. */
  timeoutMs: number;
  logger: LoggerService;
  /** Runs after the app is closed (the devnet, the embedded Postgres). */
  afterClose?: () => Promise<void>;
  /** Default: process.exit. Tests pass their own. */
  exit?: (code: number) => void;
  /** Default: Date.now. Tests pass their own clock. */
  now?: () => number;
  /** Told at the first signal, before the drain: the index sync reads it. */
  notice?: ShutdownNotice;
}

/**
 * A repeated signal within this long of the first is the same Ctrl-C arriving twice, not a
 * second press: a terminal signals its whole foreground group, and npm's run-script passes the
 * SIGINT (and a SIGTERM sent to the group) on to its child as well, so node under `npm start`
 * hears one Ctrl-C twice a few milliseconds apart. A person pressing again takes longer.
 */
export const REPEATED_SIGNAL_WINDOW_MS = 1000;

/**
 * SIGHUP too: a closed terminal sends it, and Node's default (exit at once, no `exit` event)
 * would leave the embedded Postgres of `npm start` running, in its process group of its own.
 */
const SIGNALS = ['SIGTERM', 'SIGINT', 'SIGHUP'] as const;

/**
 * Until the returned function is called, a signal ends the process at once, as Node's default
 * does, but through `process.exit` (128 + the signal's number): Node's default skips the `exit`
 * listeners, and the embedded Postgres, in a process group of its own, is stopped by one. For a
 * process with nothing to drain: the gateway while it starts, the test run's setup.
 *
 * Unless `interrupt` takes the signal (returns true): a step under way that ends cleanly on it
 * (the gateway's wait for the migration lock), after which the process winds down by itself.
 * The same signal again within REPEATED_SIGNAL_WINDOW_MS is the one passed on (npm, a
 * terminal) and ignored; one after that exits at once.
 */
export function exitOnSignal(
  interrupt?: (signal: NodeJS.Signals) => boolean,
  /** What the line says after the signal's name when it exits at once, not interrupted before. */
  atOnce = 'exiting at once, nothing to drain yet',
): () => void {
  let interruptedAt: number | undefined;
  const onSignal = (signal: NodeJS.Signals) => {
    if (interruptedAt === undefined && interrupt?.(signal)) {
      interruptedAt = Date.now();
      return;
    }
    if (interruptedAt !== undefined && Date.now() - interruptedAt <= REPEATED_SIGNAL_WINDOW_MS)
      return;
    // On stderr, as start-up failures are: the logger may not exist yet.
    process.stderr.write(
      interruptedAt === undefined ? `${signal}: ${atOnce}\n` : `${signal} again: exiting at once\n`,
    );
    process.exit(128 + constants.signals[signal]);
  };
  for (const signal of SIGNALS) process.on(signal, onSignal);
  return () => {
    for (const signal of SIGNALS) process.removeListener(signal, onSignal);
  };
}

/**
 * On SIGTERM, SIGINT or SIGHUP: stop accepting connections, let in-flight requests finish
 * (bounded by `timeoutMs`, their answers saying `Connection: close`), then close the app, whose
 * shutdown hooks stop the background jobs (releasing their advisory locks) and close the
 * Postgres pool and the Redis connection. A second signal exits at once, unless it comes within
 * `REPEATED_SIGNAL_WINDOW_MS` of the first (the same signal delivered twice; see
 * docs/decisions.md, "Replicas and shutdown").
 */
export function installGracefulShutdown(
  app: INestApplication,
  options: GracefulShutdownOptions,
): void {
  const exit = options.exit ?? ((code: number) => process.exit(code));
  const now = options.now ?? Date.now;
  const answers = trackAnswers(app.getHttpServer() as Server);
  let firstSignalAt: number | undefined;
  const onSignal = (signal: NodeJS.Signals) => {
    const at = now();
    if (firstSignalAt !== undefined) {
      if (at - firstSignalAt <= REPEATED_SIGNAL_WINDOW_MS) {
        options.logger.debug?.(
          `${signal} again within ${REPEATED_SIGNAL_WINDOW_MS} ms: the same signal passed on, still draining`,
          'Shutdown',
        );
        return;
      }
      options.logger.warn(`${signal} again: exiting without waiting`, 'Shutdown');
      exit(1);
      return;
    }
    firstSignalAt = at;
    options.notice?.begin();
    options.logger.log(`${signal}: draining in-flight requests, then shutting down`, 'Shutdown');
    void shutDown(app, options, answers).then(
      () => exit(0),
      (error: unknown) => {
        options.logger.error(`shutdown failed: ${(error as Error).message}`, 'Shutdown');
        exit(1);
      },
    );
  };
  for (const signal of SIGNALS) process.on(signal, onSignal);
}

async function shutDown(
  app: INestApplication,
  options: GracefulShutdownOptions,
  answers: AnswersInFlight,
): Promise<void> {
  const started = Date.now();
  answers.closeConnections();
  const cut = await drain(app.getHttpServer() as Server, options.timeoutMs, answers);
  const drained = `HTTP server drained in ${Date.now() - started} ms`;
  // Requests cut off are answers their clients never got: an operator's concern, as a warning.
  if (cut > 0)
    options.logger.warn(
      `${drained}; cut ${cut} connection(s) still busy after ${options.timeoutMs} ms`,
      'Shutdown',
    );
  else options.logger.log(drained, 'Shutdown');
  await app.close();
  await options.afterClose?.();
  options.logger.log('shutdown complete', 'Shutdown');
}

interface AnswersInFlight {
  /** From now on, every answer whose head is not yet sent closes its connection. */
  closeConnections(): void;
  /**
   * Marks the answers whose head is not yet sent as cut off before it, as their connections are
   * about to be: a handler that finished after the cut (its miner calls aborted by `app.close()`)
   * wrote a head that went nowhere, and its request line said `200 closed before the answer was
   * complete` where no status reached the client (an operator audit).
   */
  cutOffUnsent(): void;
}

/**
 * The open connections, so that a drain can make the answers under way on them say
 * `Connection: close`: an answer sent while draining said `keep-alive`, and a client or proxy
 * went on sending requests on a connection to a replica on its way out (a review's finding).
 * Connections, not answers, are tracked: a set of every answer with a `close` listener each
 * grew the heap under load (bench:health's service CPU per response 133 → 194-217 µs, its peak
 * RSS 169 → 308 MB), while a kept-alive connection serves many requests. The request listener
 * is prepended, so that a request arriving on a kept-alive connection while draining is marked
 * before any handler answers it.
 */
function trackAnswers(server: Server): AnswersInFlight {
  const connections = new Set<ServingSocket>();
  let closing = false;
  const closeAfter = (response: ServerResponse) => {
    if (!response.headersSent) response.setHeader('Connection', 'close');
  };
  server.on('connection', (socket: ServingSocket) => {
    connections.add(socket);
    socket.once('close', () => connections.delete(socket));
  });
  server.prependListener('request', (_request: IncomingMessage, response: ServerResponse) => {
    if (closing) closeAfter(response);
  });
  return {
    closeConnections: () => {
      closing = true;
      for (const socket of connections) if (socket._httpMessage) closeAfter(socket._httpMessage);
    },
    cutOffUnsent: () => {
      for (const socket of connections) {
        const response = socket._httpMessage;
        if (response && !response.headersSent) cutOffBeforeItsHead(response);
      }
    },
  };
}

/**
 * A connection as Node's HTTP server keeps it: the answer it is writing, if any (Node's own field).
 */
type ServingSocket = Socket & { _httpMessage?: ServerResponse | null };

/**
 * Stops accepting and resolves once every connection has closed. Keep-alive connections are
 * closed as soon as they are idle (checked every 100 ms, so a request that arrives on one in
 * the meantime is still answered); busy ones are cut after the timeout. Returns how many were cut.
 */
function drain(server: Server, timeoutMs: number, answers: AnswersInFlight): Promise<number> {
  return new Promise((resolve) => {
    let cut = 0;
    const sweep = setInterval(() => server.closeIdleConnections(), 100);
    const deadline = setTimeout(() => {
      server.getConnections((_error, count) => {
        cut = count;
        answers.cutOffUnsent();
        server.closeAllConnections();
      });
    }, timeoutMs);
    server.close(() => {
      clearInterval(sweep);
      clearTimeout(deadline);
      resolve(cut);
    });
    server.closeIdleConnections();
  });
}
