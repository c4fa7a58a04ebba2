import { DataSource, QueryRunner } from 'typeorm';
import { MinerFailingUntil1764840000000 } from '../../src/database/migrations/1764840000000-MinerFailingUntil';
import { JobStatusCheckAndColumnTypes1765020000000 } from '../../src/database/migrations/1765020000000-JobStatusCheckAndColumnTypes';
import { MinerEntity } from '../../src/network/miner.entity';
import { MinersRepository } from '../../src/network/miners.repository';
import { FileMetagraphSource } from '../../src/network/metagraph/file-metagraph-source';
import { MediumDatabase, openMediumDatabase } from '../support/medium-database';
import { minerIndexOn } from '../support/miner-index';
import { metagraphNeuron } from '../support/neurons';

/** A METAGRAPH_FILE path of 400 characters: deep folders, as a mounted volume may give. */
const LONG_PATH = `/${Array.from({ length: 40 }, (_, i) => `folder-${String(i).padStart(2, '0')}`).join('/')}/metagraph.json`;
const STATUSES = ['idle', 'running', 'succeeded', 'failed', 'interrupted'];

/**
 * JobStatusCheckAndColumnTypes (a schema audit's L3, L4, L5) and MinerFailingUntil's `down`
 * (L6), on a database of their own: the spec reverts migrations.
 */
describe(JobStatusCheckAndColumnTypes1765020000000.name, () => {
  let medium: MediumDatabase;
  let database: DataSource;
  let runner: QueryRunner;
  let miners: MinersRepository;

  beforeAll(async () => {
    medium = await openMediumDatabase({ own: 'jobstatus', entities: [MinerEntity] });
    database = medium.dataSource;
    runner = database.createQueryRunner();
    miners = new MinersRepository(database, minerIndexOn(database).service);
  });
  afterAll(async () => {
    await runner.release();
    await medium.close();
  });

  async function inTransaction(step: (runner: QueryRunner) => Promise<void>): Promise<void> {
    await runner.startTransaction();
    try {
      await step(runner);
      await runner.commitTransaction();
    } catch (error) {
      await runner.rollbackTransaction();
      throw error;
    }
  }
  const migration = new JobStatusCheckAndColumnTypes1765020000000();
  const syncFromLongPath = (block: number) =>
    miners.syncNeurons([metagraphNeuron(0)], {
      origin: {
        network: 'file',
        source: new FileMetagraphSource(LONG_PATH, 13).description,
        netuid: 13,
        block,
      },
    });
  const setStatus = (status: string) =>
    database.query(
      `INSERT INTO job_runs (name, status) VALUES ('check', $1)
       ON CONFLICT (name) DO UPDATE SET status = EXCLUDED.status`,
      [status],
    );
  const typeOf = async (table: string, column: string) =>
    (
      await database.query<{ type: string }[]>(
        `SELECT format_type(atttypid, atttypmod) AS type FROM pg_attribute
         WHERE attrelid = $1::regclass AND attname = $2`,
        [table, column],
      )
    )[0].type;

  // varchar(256) failed the whole sync (22001): no metagraph was ever applied.
  it('applies a metagraph read from a METAGRAPH_FILE path longer than 256 characters', async () => {
    expect(LONG_PATH.length).toBeGreaterThan(256);
    await syncFromLongPath(10);
    expect(await miners.lastMetagraph()).toMatchObject({ source: `file ${LONG_PATH}`, block: 10 });
    expect(await typeOf('metagraph_state', 'source')).toBe('text');
  });

  it('takes every status the job runner writes, and refuses any other', async () => {
    for (const status of STATUSES) await setStatus(status);
    await expect(setStatus('done')).rejects.toMatchObject({
      driverError: { code: '23514', constraint: 'job_runs_status_check' },
    });
  });

  it("types the Gravity cache's hotkey as varchar(64), as the other tables do", async () => {
    expect(await typeOf('gravity_files', 'hotkey')).toBe('character varying(64)');
  });

  it('reverts to the old types and back on populated tables', async () => {
    await database.query(`INSERT INTO gravity_files (hotkey, sha, content) VALUES ($1, $2, '{}')`, [
      '5'.repeat(48),
      'a'.repeat(40),
    ]);
    await inTransaction((r) => migration.down(r));
    expect(await typeOf('metagraph_state', 'source')).toBe('character varying(256)');
    expect(await typeOf('gravity_files', 'hotkey')).toBe('text');
    // The old column's bound, shown: the source is cut, and a new sync from the long path fails.
    expect((await miners.lastMetagraph())!.source).toBe(`file ${LONG_PATH}`.slice(0, 256));
    await expect(syncFromLongPath(11)).rejects.toMatchObject({
      driverError: { code: '22001' },
    });
    await setStatus('done');
    await setStatus('idle');
    // A hotkey no chain account has: the cache row is dropped by `up`, not left to fail it.
    await database.query(`INSERT INTO gravity_files (hotkey, sha, content) VALUES ($1, $2, '{}')`, [
      'x'.repeat(80),
      'b'.repeat(40),
    ]);

    await inTransaction((r) => migration.up(r));
    expect(
      await database.query('SELECT length(hotkey) AS length FROM gravity_files ORDER BY sha'),
    ).toEqual([{ length: 48 }]);
    await syncFromLongPath(12);
    expect(await miners.lastMetagraph()).toMatchObject({ source: `file ${LONG_PATH}`, block: 12 });
    await expect(setStatus('done')).rejects.toMatchObject({ driverError: { code: '23514' } });
  });

  // The release before MinerFailingUntil clears `failing` only through the breaker that wrote
  // it: a row left failing by the revert stayed so for good.
  it("MinerFailingUntil's down makes failing miners active, as its up does", async () => {
    await miners.syncNeurons([0, 1, 2].map((uid) => metagraphNeuron(uid)));
    await database.query(
      `UPDATE miners SET state = CASE uid WHEN 0 THEN 'failing' WHEN 1 THEN 'address_refused'
         ELSE 'deregistered' END, failing_until = CASE uid WHEN 0 THEN now() + interval '1 hour' END`,
    );
    const failingUntil = new MinerFailingUntil1764840000000();
    await inTransaction((r) => failingUntil.down(r));
    expect(await database.query('SELECT uid, state FROM miners ORDER BY uid')).toEqual([
      { uid: 0, state: 'active' },
      { uid: 1, state: 'address_refused' },
      { uid: 2, state: 'deregistered' },
    ]);
    await inTransaction((r) => failingUntil.up(r));
  });
});
