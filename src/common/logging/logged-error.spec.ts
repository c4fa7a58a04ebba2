import { DatabaseError } from 'pg';
import { pino } from 'pino';
import { QueryFailedError } from 'typeorm';
import { LoggedError, loggedError } from './logged-error';

/** What a key's hash looks like: 64 hex digits. */
const KEY_HASH = 'c0ffee'.padEnd(64, '42');
const INSERT = 'INSERT INTO "api_keys"("name", "key_hash") VALUES ($1, $2)';

/** A duplicate key as TypeORM reports it: pg's error, its fields copied, and the parameters. */
function duplicateKey(): QueryFailedError {
  const driverError = new DatabaseError(
    'duplicate key value violates unique constraint "UQ_api_keys_key_hash"',
    0,
    'error',
  );
  Object.assign(driverError, {
    code: '23505',
    constraint: 'UQ_api_keys_key_hash',
    table: 'api_keys',
    column: 'key_hash',
    schema: 'public',
    routine: '_bt_check_unique',
    detail: `Key (key_hash)=(${KEY_HASH}) already exists.`,
    where: `PL/pgSQL function f() line 3 at SQL statement: ${KEY_HASH}`,
    hint: `raised with ${KEY_HASH}`,
  });
  return new QueryFailedError(INSERT, ['a name', KEY_HASH], driverError);
}

/** A refused connection as Node reports it. */
function connectionRefused(): Error {
  return Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:6379'), {
    code: 'ECONNREFUSED',
    errno: -111,
    syscall: 'connect',
    address: '127.0.0.1',
    port: 6379,
  });
}

describe(loggedError.name, () => {
  it("keeps pg's names of what a statement hit, never its values, parameters, where or hint", () => {
    const logged = loggedError(duplicateKey());
    expect(logged).toEqual({
      type: 'QueryFailedError',
      message: 'duplicate key value violates unique constraint "UQ_api_keys_key_hash"',
      stack: expect.stringMatching(/^QueryFailedError: duplicate key/),
      code: '23505',
      query: INSERT,
      constraint: 'UQ_api_keys_key_hash',
      table: 'api_keys',
      column: 'key_hash',
      schema: 'public',
      routine: '_bt_check_unique',
    });
    expect(JSON.stringify(logged)).not.toContain(KEY_HASH);
  });

  it("keeps Node's system call, error number, address and port", () => {
    expect(loggedError(connectionRefused())).toEqual({
      type: 'Error',
      message: 'connect ECONNREFUSED 127.0.0.1:6379',
      stack: expect.stringMatching(/^Error: connect ECONNREFUSED/),
      code: 'ECONNREFUSED',
      errno: -111,
      syscall: 'connect',
      address: '127.0.0.1',
      port: 6379,
    });
  });

  it('applies the same allowance to a cause, and to its cause', () => {
    const error = new Error('the key could not be stored', {
      cause: new Error('while inserting', { cause: duplicateKey() }),
    });
    const logged = loggedError(error);
    expect(logged).toMatchObject({
      type: 'Error',
      // pino's message and stack hold the causes'; a cause does not repeat its stack.
      message: expect.stringContaining('while inserting'),
      stack: expect.stringContaining('caused by: QueryFailedError'),
      cause: {
        type: 'Error',
        message: 'while inserting',
        cause: { type: 'QueryFailedError', code: '23505', constraint: 'UQ_api_keys_key_hash' },
      },
    });
    expect(JSON.stringify(logged)).not.toContain(KEY_HASH);
    expect(JSON.stringify(logged)).not.toContain('parameters');
  });

  it('follows a cycle of causes a bounded number of times', () => {
    const first = new Error('first');
    const second = new Error('second', { cause: first });
    Object.assign(first, { cause: second });
    let depth = 0;
    for (let logged = loggedError(first) as LoggedError; logged.cause; depth++)
      logged = logged.cause;
    expect(depth).toBe(4);
  });

  it('applies the allowance to an aggregate error’s errors', () => {
    const logged = loggedError(new AggregateError([duplicateKey(), 'a rejected text'], 'both'));
    expect(logged).toMatchObject({
      type: 'AggregateError',
      aggregateErrors: [{ type: 'QueryFailedError', code: '23505' }, 'a rejected text'],
    });
    expect(JSON.stringify(logged)).not.toContain(KEY_HASH);
  });

  it('keeps only the allowed fields of an error-like object that is not an Error', () => {
    const errorLike = {
      name: 'DriverFailure',
      message: 'insert failed',
      code: '23505',
      constraint: 'UQ_api_keys_key_hash',
      parameters: ['a name', KEY_HASH],
      detail: `Key (key_hash)=(${KEY_HASH}) already exists.`,
      driverError: { detail: KEY_HASH },
      cause: { message: 'below', detail: KEY_HASH, code: 'XX000' },
    };
    expect(loggedError(errorLike)).toEqual({
      type: 'Object',
      message: expect.stringMatching(/^insert failed/),
      code: '23505',
      constraint: 'UQ_api_keys_key_hash',
      cause: { type: 'Object', message: 'below', code: 'XX000' },
    });
  });

  it('keeps nothing but the class of an object without a message, and a text as it is', () => {
    expect(loggedError({ keyHash: KEY_HASH, rows: [KEY_HASH] })).toEqual({ type: 'Object' });
    expect(loggedError('a text the code wrote')).toBe('a text the code wrote');
  });

  describe('an error it cannot read as usual', () => {
    // Each threw out of the serializer, and so out of the logging call: the error was lost.
    const frozen = Object.freeze(new Error('frozen'));
    const throwingGetter = Object.defineProperty(new Error('getter'), 'code', {
      get: () => {
        throw new Error(`read ${KEY_HASH}`);
      },
    });
    const holdingItself = new AggregateError([], 'holds itself');
    (holdingItself.errors as unknown[]).push(holdingItself);

    it.each([
      ['frozen (pino tags the errors it reads)', frozen, 'Error', 'frozen'],
      ['with a getter that throws', throwingGetter, 'Error', 'getter'],
      ['an aggregate holding itself', holdingItself, 'AggregateError', 'holds itself'],
    ])('is logged by its class, message and stack: %s', (_, error, type, message) => {
      const logged = loggedError(error) as LoggedError;
      expect(logged).toEqual({ type, message, stack: error.stack, unreadable: true });
      expect(JSON.stringify(logged)).not.toContain(KEY_HASH);
    });

    it('is logged by its class alone when even that much cannot be read', () => {
      const hostile = new Proxy(new Error('hidden'), {
        get: () => {
          throw new Error('no reading');
        },
      });
      expect(loggedError(hostile)).toEqual({ type: 'Object', unreadable: true });
    });

    it('still gives a pino logger its line', () => {
      const lines: string[] = [];
      const logger = pino(
        { serializers: { err: loggedError } },
        { write: (line: string) => void lines.push(line) },
      );
      logger.error({ err: frozen }, 'failed');
      logger.error({ err: holdingItself }, 'failed');
      expect(lines.map((line) => (JSON.parse(line) as { err: LoggedError }).err.type)).toEqual([
        'Error',
        'AggregateError',
      ]);
    });
  });
});
