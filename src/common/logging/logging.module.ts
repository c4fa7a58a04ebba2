import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { Module } from '@nestjs/common';
import { LoggerModule, Params } from 'nestjs-pino';
import {
  pino,
  destination,
  type DestinationStream,
  type Logger as PinoRoot,
  type LoggerOptions,
} from 'pino';
import type PinoPretty from 'pino-pretty';
import { loadWhenUsed } from '../load-when-used';
import { followLevelOf } from './debug-lines';
import { loggedError } from './logged-error';
import { API_KEY_PREFIX } from '../security/api-key-secret';
import { SecretScanner } from '../security/secret-scanner';

/** How the process logs; provided by ConfigModule (LOG_LEVEL, NODE_ENV, the secrets). */
export interface LoggingSettings {
  level: string;
  /** Development: pino-pretty's human-readable lines instead of JSON lines. */
  pretty: boolean;
  /** Where lines go instead of stdout (tests capture them). */
  destination?: DestinationStream;
  /**
   * What requests are checked with (their URLs, ids and bodies) and error bodies scrubbed with;
   * a request line holds only values it cleared, so request lines are not scanned again.
   */
  scanner: SecretScanner;
  /**
   * Scrubs every line but the request lines: `scanner`'s secrets and the ones no request is
   * checked for, which only the process's own lines can hold (the database's password).
   */
  lineScanner: SecretScanner;
}
export const LOGGING_SETTINGS = Symbol('LOGGING_SETTINGS');

/** The X-Request-Id values honoured; anything else is replaced by a new UUID. */
export const REQUEST_ID_PATTERN = /^[\w.:-]{1,128}$/;

/**
 * Honours a sane incoming X-Request-Id (from a load balancer), else makes one; echoes it back.
 * An id that holds a secret, a piece of one, or the start of an issued key (a client's mistake,
 * or a probe) is replaced: ids are logged and returned in error bodies.
 */
export function requestId(
  request: IncomingMessage,
  response: ServerResponse,
  scanner: SecretScanner,
): string {
  const incoming = request.headers['x-request-id'];
  const sane =
    typeof incoming === 'string' &&
    REQUEST_ID_PATTERN.test(incoming) &&
    !incoming.includes(API_KEY_PREFIX) &&
    !scanner.contains(incoming) &&
    !scanner.holdsPieceOf(incoming);
  const id = sane ? incoming : randomUUID();
  response.setHeader('X-Request-Id', id);
  return id;
}

/**
 * How long a log line may wait in the buffer of stdout: at most this, or until 4 KiB (about 15
 * request lines) have gathered. Writing each line on its own cost a system call per request,
 * the largest single cost of a request's logging. The buffer is flushed on exit.
 */
export const LOG_FLUSH_MS = 100;
export const LOG_BUFFER_BYTES = 4096;

/**
 * JSON lines (pino) in production and tests; in development, pino-pretty's human-readable
 * single lines, formatted in process (so a test can capture them). pino-pretty is a development
 * dependency (pruned from the production image), so it is loaded only then; without it the
 * output stays JSON.
 */
function destinationFor(settings: LoggingSettings, sync = false): DestinationStream {
  const jsonLines = () =>
    settings.destination ??
    (sync
      ? destination({ dest: 1, sync: true })
      : destination({ dest: 1, minLength: LOG_BUFFER_BYTES, periodicFlush: LOG_FLUSH_MS }));
  if (!settings.pretty) return jsonLines();
  let pretty: typeof PinoPretty;
  try {
    pretty = loadWhenUsed<typeof PinoPretty>('pino-pretty');
  } catch {
    process.stderr.write('pino-pretty is not installed: logging JSON lines\n');
    return jsonLines();
  }
  return pretty({
    singleLine: true,
    translateTime: 'SYS:HH:MM:ss.l',
    destination: settings.destination ?? 1,
    sync,
  });
}

/** The two pino loggers of the process, writing to one destination. */
interface Loggers {
  /** Nest's Logger (nestjs-pino) and every line but the request lines. */
  root: PinoRoot;
  /** The one line per request (request-logging.ts). */
  requestLines: PinoRoot;
}

function createLoggers(settings: LoggingSettings): Loggers {
  const output = destinationFor(settings);
  const root = pino(rootOptions(settings), output);
  // A request line is made only of values already cleared of secrets by the scanner (the
  // redacted URL, a checked or generated request id, the method, numbers: loggedRequest), so it
  // skips the second scan of the whole line, which cost more than writing it.
  const requestLines = pino({ level: settings.level }, output);
  // Debug lines are built only when the root writes them (debug-lines.ts).
  followLevelOf(root);
  return { root, requestLines };
}

/**
 * The process's log before the app and its logger exist: start-up's migrating, which may wait
 * minutes for another replica's migration. The same lines as the root logger's, written at once
 * (no buffer, no timer), so that each is out before the app's logger writes its first.
 */
export function createStartupLogger(settings: LoggingSettings): PinoRoot {
  return pino(rootOptions(settings), destinationFor(settings, true));
}

/**
 * Nest's wiring at start, one `info` line per module and route: about 60 lines a start that
 * say nothing the start line and the banner do not (a log audit's finding). Written only when
 * debug lines are; their warnings and errors always. `NestApplication`'s "successfully started"
 * is said before the port is bound, so a start failing on a busy port read as started before its
 * failure line: the banner, written once listening, is the start line.
 */
const INFO = 30;
const NEST_WIRING = new Set([
  'InstanceLoader',
  'RoutesResolver',
  'RouterExplorer',
  'NestApplication',
]);

function isNestWiring(first: unknown): boolean {
  const context = (first as { context?: unknown } | null)?.context;
  return typeof context === 'string' && NEST_WIRING.has(context);
}

/** The root logger's options: its level, the secret scanner, the error and request fields. */
function rootOptions(settings: LoggingSettings): LoggerOptions {
  const { lineScanner } = settings;
  return {
    level: settings.level,
    hooks: {
      logMethod(args, method, level) {
        if (level === INFO && isNestWiring(args[0])) {
          // Written as the debug lines they are (at info they said `level 30` under debug).
          if (this.isLevelEnabled('debug')) this.debug(...args);
          return;
        }
        method.apply(this, args);
      },
      // The last line of defence: every line is scanned as written, and a token holding a
      // secret (in any encoding: see SecretScanner) is replaced, whatever put it there (an
      // error message quoting input, a stack trace, a future log call).
      streamWrite: (line) => lineScanner.scrub(line),
    },
    // An error keeps its class, message, code, stack and a failed query's text, never the
    // query's parameters (a key's hash, a client's text): see loggedError.
    serializers: { err: loggedError },
    // Lines logged while handling a request carry `req` (id, method, redacted url): see
    // request-logging.ts. Headers and bodies are never serialized, so keys, tokens and the
    // bodies of key requests (which hold new keys) never reach the log; the redaction is a
    // second line of defence should a header ever be logged.
    redact: {
      paths: ['req.headers["x-api-key"]', 'req.headers.authorization', 'req.headers.cookie'],
      censor: '[redacted]',
    },
  };
}

const LOGGERS = Symbol('LOGGERS');
/** The root pino logger. */
export const ROOT_LOGGER = Symbol('ROOT_LOGGER');
/** The request lines' logger, for the request-logging middleware (app.setup.ts). */
export const REQUEST_LINE_LOGGER = Symbol('REQUEST_LINE_LOGGER');

@Module({
  providers: [
    { provide: LOGGERS, inject: [LOGGING_SETTINGS], useFactory: createLoggers },
    { provide: ROOT_LOGGER, inject: [LOGGERS], useFactory: (loggers: Loggers) => loggers.root },
    {
      provide: REQUEST_LINE_LOGGER,
      inject: [LOGGERS],
      useFactory: (loggers: Loggers) => loggers.requestLines,
    },
  ],
  exports: [ROOT_LOGGER, REQUEST_LINE_LOGGER],
})
class RootLoggerModule {}

@Module({
  imports: [
    RootLoggerModule,
    LoggerModule.forRootAsync({
      imports: [RootLoggerModule],
      inject: [ROOT_LOGGER],
      // Requests are logged by our own middleware (request-logging.ts), not by nestjs-pino's
      // pino-http middleware: hence no routes.
      useFactory: (logger: PinoRoot): Params => ({ pinoHttp: { logger }, forRoutes: [] }),
    }),
  ],
  exports: [RootLoggerModule],
})
export class LoggingModule {}
