import { retryDelay, retryDelaySql } from '../../src/common/retry-delay';
import { COMPILE_RETRY_MAX_MS, COMPILE_RETRY_MS } from '../../src/modules/tasks/task-compiler';
import { MediumDatabase, openMediumDatabase } from '../support/medium-database';

/** Failure counts as a task row keeps them: from 1, past the exponent's cap of 30. */
const FAILURES = Array.from({ length: 40 }, (_, index) => index + 1);

/**
 * A task's failed collections and compiles wait in SQL (TaskLifecycleRepository) what retryDelay
 * says in TypeScript for the same failures: one backoff, two forms.
 */
describe(retryDelaySql.name, () => {
  let medium: MediumDatabase;

  beforeAll(async () => {
    medium = await openMediumDatabase();
  });
  afterAll(() => medium.close());

  const sqlWaits = async (first: number, max: number) =>
    (
      await medium.dataSource.query<{ wait: number }[]>(
        `SELECT ${retryDelaySql('n - 1', '$1', '$2')} AS wait
         FROM unnest($3::int[]) WITH ORDINALITY AS f(n, i) ORDER BY i`,
        [first, max, FAILURES],
      )
    ).map((row) => row.wait);

  it.each([
    ['a compile', COMPILE_RETRY_MS, COMPILE_RETRY_MAX_MS],
    ['a collection (the default tick and interval)', 60_000, 3_600_000],
    ['a cap no wait reaches', 1000, 2 ** 53],
  ])('waits after n failures of %s what retryDelay(n - 1) says', async (_, first, max) => {
    expect(await sqlWaits(first, max)).toEqual(
      FAILURES.map((failures) => retryDelay(failures - 1, first, max)),
    );
  });
});
