import {
  QueryFailedError,
  QueryRunnerAlreadyReleasedError,
  QueryRunnerProviderAlreadyReleasedError,
} from 'typeorm';
import { isDatabaseUnavailable } from './database-unavailable';

function withCode(message: string, code: string): Error {
  return Object.assign(new Error(message), { code });
}

describe(isDatabaseUnavailable.name, () => {
  it.each([
    ['a refused connection', withCode('connect ECONNREFUSED 127.0.0.1:5432', 'ECONNREFUSED')],
    ['an admin shutdown', withCode('terminating connection due to administrator command', '57P01')],
    ['a server shutting down', withCode('the database system is shutting down', '57P03')],
    ['a statement timeout', withCode('canceling statement due to statement timeout', '57014')],
    ['a connection exception', withCode('connection failure', '08006')],
    ['a server starting up', withCode('the database system is starting up', '57P03')],
    ['a crash shutdown', withCode('terminating connection because of crash', '57P02')],
    ['a full server', withCode('sorry, too many clients already', '53300')],
    // ALTER DATABASE … WITH ALLOW_CONNECTIONS false, as while the database is restored or moved.
    [
      'a database that accepts no connections',
      withCode('database "gateway" is not currently accepting connections', '55000'),
    ],
    // Refusals of a new connection once the service runs: renamed or dropped, password rotated.
    ['a database renamed away', withCode('database "gateway" does not exist', '3D000')],
    ['a rotated password', withCode('password authentication failed for user "gateway"', '28P01')],
    [
      'a role that may no longer log in',
      withCode('role "gateway" is not permitted to log in', '28000'),
    ],
    ['a dead pooled connection', new Error('Connection terminated unexpectedly')],
    ['a full pool', new Error('timeout exceeded when trying to connect')],
    ['a connect timeout', new Error('Connection terminated due to connection timeout')],
    ['a client-side query timeout', new Error('Query read timeout')],
    // Raised by the next statement of a save whose connection died under it.
    ['a query runner released by its dead connection', new QueryRunnerAlreadyReleasedError()],
    // Raised by the next statement of a transaction whose connection died under it (a task list
    // during a Postgres restart answered 500: postgres-outage.e2e-spec).
    [
      "a transaction's manager whose runner was released",
      new QueryRunnerProviderAlreadyReleasedError(),
    ],
  ])('recognises %s', (_name, error) => {
    expect(isDatabaseUnavailable(error)).toBe(true);
  });

  it("looks inside TypeORM's QueryFailedError and an error's cause", () => {
    const driverError = withCode('terminating connection due to administrator command', '57P01');
    expect(isDatabaseUnavailable(new QueryFailedError('SELECT 1', [], driverError))).toBe(true);
    expect(isDatabaseUnavailable(new Error('wrapped', { cause: driverError }))).toBe(true);
  });

  it('leaves bugs and bad queries to the 500 path', () => {
    const syntax = withCode('syntax error at or near "SELEC"', '42601');
    expect(isDatabaseUnavailable(new QueryFailedError('SELEC 1', [], syntax))).toBe(false);
    expect(isDatabaseUnavailable(withCode('duplicate key', '23505'))).toBe(false);
    // 55000 is also a query's own failure, not only a refused connection.
    const currval = 'currval of sequence "tasks_id_seq" is not yet defined in this session';
    expect(isDatabaseUnavailable(withCode(currval, '55000'))).toBe(false);
    const inUse = 'cannot ALTER TABLE "tasks" because it is being used by active queries';
    expect(isDatabaseUnavailable(withCode(inUse, '55000'))).toBe(false);
    expect(isDatabaseUnavailable(new TypeError('x is undefined'))).toBe(false);
    expect(isDatabaseUnavailable('Connection terminated')).toBe(false);
    expect(isDatabaseUnavailable(undefined)).toBe(false);
  });
});
