import type { LoggerService } from '@nestjs/common';

export interface CrashLoggingOptions {
  /** Default: process.exit. Tests pass their own. */
  exit?: (code: number) => void;
  /** Default: process. Tests pass an emitter of their own. */
  events?: NodeJS.EventEmitter;
}

/**
 * An error nothing caught (a throw in a callback, a rejection no one awaited) still ends the
 * process with 1, as Node's default does: what state it left is unknown, and an orchestrator
 * restarts the process. Node would print it to stderr as plain text, outside the JSON log and
 * past its secret scanner (a client library's error can quote a URL with its credentials); it
 * is logged as a fatal line through the app's logger first (pino flushes its buffer on exit).
 */
export function installCrashLogging(logger: LoggerService, options: CrashLoggingOptions = {}) {
  const exit = options.exit ?? ((code: number) => process.exit(code));
  const events = options.events ?? process;
  const crash = (what: string) => (error: unknown) => {
    // A logger that throws here must not turn the exit into Node's 7 (a throw in the handler).
    try {
      logger.fatal?.({ err: error }, `${what}: exiting`, 'Crash');
    } finally {
      exit(1);
    }
  };
  events.on('uncaughtException', crash('uncaught exception'));
  events.on('unhandledRejection', crash('unhandled promise rejection'));
}
