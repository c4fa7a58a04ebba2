import { stdSerializers } from 'pino';
import { QueryFailedError } from 'typeorm';

/** What a logged error keeps: enough to find the fault, nothing a client or a row put in it. */
export interface LoggedError {
  type: string;
  message?: string;
  /** With its causes' stacks (`caused by: …`); not repeated on a cause, whose parent has it. */
  stack?: string;
  /** A SQLSTATE, a Node.js error code (`ECONNREFUSED`). */
  code?: string | number;
  /** A failed query's text: placeholders (`$1`), never the values bound to them. */
  query?: string;
  /** pg's names of what a failed statement hit: identifiers, never values. */
  constraint?: string;
  table?: string;
  column?: string;
  schema?: string;
  routine?: string;
  /** A failed system call (`connect`), its error number, and the address and port it was for. */
  syscall?: string;
  errno?: number;
  address?: string;
  port?: number;
  cause?: LoggedError;
  /** An AggregateError's errors (a value that is not an object is kept as it is, as at the top). */
  aggregateErrors?: unknown[];
  /** Reading it as usual threw: only its class, message and stack, where they could be read. */
  unreadable?: true;
}

/** Fields kept as they are when they hold text: pg's and Node's, which name, never quote. */
const TEXT_FIELDS = [
  'constraint',
  'table',
  'column',
  'schema',
  'routine',
  'syscall',
  'address',
] as const;
const NUMBER_FIELDS = ['errno', 'port'] as const;

/** How deep causes and aggregated errors are followed: a cycle or a long chain stops here. */
const MAX_NESTING = 4;

/**
 * The serializer of every error logged under `err` (the exception filter's 500s, nestjs-pino's
 * `logger.error(error)`): its class, message, code and stack (with its causes'), a failed query's
 * text, pg's names of the constraint, table, column, schema and routine, Node's system call,
 * error number, address and port, and the same of its causes and aggregated errors. pino's
 * standard serializer copied every enumerable field, and TypeORM's QueryFailedError carries the
 * query's `parameters` (a key's hash, a client's text), its `driverError`, and pg's fields copied
 * onto it, among them `detail`, which quotes values (`Key (key_hash)=(…) already exists`): a
 * failed insert of a key logged the key's hash (found by an audit). Kept by allowance, not by
 * exclusion, so that a field a library adds later stays out; so are `where` (a PL/pgSQL context
 * can quote values) and pg's `hint` (mostly fixed text, but a function's `RAISE … USING HINT`
 * is anything: the code and message find the fault without it). Any object logged as `err` goes
 * through the allowance, an Error or not: one that is not was logged with all its fields.
 */
export function loggedError(error: unknown): unknown {
  // A string or a number says only what the code that logged it wrote.
  if (typeof error !== 'object' || error === null) return error;
  try {
    return logged(error, 0, false);
  } catch {
    return unreadable(error);
  }
}

/**
 * An error whose reading threw (a frozen one, which pino's serializer tags; a getter that
 * throws; an aggregate holding itself, which pino's follows without end). A serializer that
 * throws makes the logging call throw: the error was lost (a request's 500 logged the
 * serializer's own TypeError in its place).
 */
function unreadable(error: object): LoggedError {
  const result: LoggedError = { type: readSafely(() => typeOf(error)) ?? 'Object' };
  const message = readSafely(() => (error as { message?: unknown }).message);
  const stack = readSafely(() => (error as { stack?: unknown }).stack);
  if (typeof message === 'string') result.message = message;
  if (typeof stack === 'string') result.stack = stack;
  result.unreadable = true;
  return result;
}

function readSafely<T>(read: () => T): T | undefined {
  try {
    return read();
  } catch {
    return undefined;
  }
}

function logged(error: object, nesting: number, isCause: boolean): LoggedError {
  const fields = error as Record<string, unknown>;
  const result: LoggedError = { type: typeOf(error) };
  if (isCause) {
    // Its parent's message and stack already hold this cause's (pino's messageWithCauses).
    if (typeof fields.message === 'string') result.message = fields.message;
  } else {
    // pino's serializer returns anything without a `message` as it is: nothing of it is read.
    const standard = stdSerializers.err(error as Error) as Partial<Record<string, unknown>>;
    if (typeof standard.message === 'string') result.message = standard.message;
    // Only an error with a stack has one: pino's would be its causes' alone, or nothing.
    if (typeof fields.stack === 'string' && typeof standard.stack === 'string')
      result.stack = standard.stack;
  }
  if (typeof fields.code === 'string' || typeof fields.code === 'number') result.code = fields.code;
  if (error instanceof QueryFailedError && typeof error.query === 'string')
    result.query = error.query;
  for (const name of TEXT_FIELDS) if (typeof fields[name] === 'string') result[name] = fields[name];
  for (const name of NUMBER_FIELDS)
    if (typeof fields[name] === 'number') result[name] = fields[name];
  if (nesting < MAX_NESTING) {
    if (typeof fields.cause === 'object' && fields.cause !== null)
      result.cause = logged(fields.cause, nesting + 1, true);
    if (Array.isArray(fields.errors))
      result.aggregateErrors = fields.errors.map((inner: unknown) =>
        typeof inner === 'object' && inner !== null ? logged(inner, nesting + 1, false) : inner,
      );
  }
  return result;
}

/** The error's class, as pino names it: its constructor's name, else its `name`. */
function typeOf(error: object): string {
  const constructor = (error as { constructor?: unknown }).constructor;
  if (typeof constructor === 'function' && constructor.name) return constructor.name;
  const name = (error as { name?: unknown }).name;
  return typeof name === 'string' ? name : 'Object';
}
