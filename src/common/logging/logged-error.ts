import { stdSerializers } from 'pino';
import { QueryFailedError } from 'typeorm';

/** What a logged error keeps: enough to find the fault, nothing a client or a row put in it. */
export interface LoggedError {
  type: string;
  message: string;
  stack: string;
  /** A SQLSTATE, a Node.js error code (`ECONNREFUSED`). */
  code?: string | number;
  /** A failed query's text: placeholders (`$1`), never the values bound to them. */
  query?: string;
  aggregateErrors?: unknown[];
}

/**
 * The serializer of every error logged under `err` (the exception filter's 500s, nestjs-pino's
 * `logger.error(error)`): its class, message, code and stack (with its causes'), and a failed
 * query's text. pino's standard serializer copied every enumerable field, and TypeORM's
 * QueryFailedError carries the query's `parameters` (a key's hash, a client's text), its
 * `driverError`, and pg's fields copied onto it, among them `detail`, which quotes values
 * (`Key (key_hash)=(…) already exists`): a failed insert of a key logged the key's hash (found by
 * an audit). Kept by allowance, not by exclusion, so that a field a library adds later stays out.
 */
export function loggedError(error: unknown): unknown {
  if (!(error instanceof Error)) return error;
  const standard = stdSerializers.err(error);
  const logged: LoggedError = {
    type: standard.type,
    message: standard.message,
    stack: standard.stack,
  };
  const code = (error as { code?: unknown }).code;
  if (typeof code === 'string' || typeof code === 'number') logged.code = code;
  if (error instanceof QueryFailedError && typeof error.query === 'string')
    logged.query = error.query;
  if (error instanceof AggregateError)
    logged.aggregateErrors = error.errors.map((inner: unknown) => loggedError(inner));
  return logged;
}
