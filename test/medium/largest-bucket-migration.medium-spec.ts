import { DataSource, QueryRunner } from 'typeorm';
import { LargestBucketPerHour1764752000000 } from '../../src/database/migrations/1764752000000-LargestBucketPerHour';
import { IndexRow } from '../../src/network/index/compressed-index';
import { MinersRepository } from '../../src/network/miners.repository';
import { MediumDatabase, openMediumDatabase } from '../support/medium-database';
import { metagraphNeuron } from '../support/neurons';
import { minerIndexOn } from '../support/miner-index';

const HOUR = 490_000;

/**
 * The migration fills the largest bucket of every (miner, source, hour) already in the totals
 * from the index, as an index replace writes it. Run on a database of its own: indexes are
 * stored, `down` drops the columns, and `up` must bring back what the replaces wrote.
 */
describe(LargestBucketPerHour1764752000000.name, () => {
  let medium: MediumDatabase;
  let database: DataSource;
  let runner: QueryRunner;
  const migration = new LargestBucketPerHour1764752000000();

  const inTransaction = async (work: (runner: QueryRunner) => Promise<void>) => {
    await runner.startTransaction();
    await work(runner);
    await runner.commitTransaction();
  };

  beforeAll(async () => {
    medium = await openMediumDatabase({ own: 'largest' });
    database = medium.dataSource;
    runner = database.createQueryRunner();
  });
  afterAll(async () => {
    await runner.release();
    await medium.close();
  });

  it("fills each miner's largest bucket per hour from its stored index", async () => {
    const { repository, service } = minerIndexOn(database);
    await new MinersRepository(database, service).syncNeurons(
      [0, 1].map((uid) => metagraphNeuron(uid, { axon_url: null })),
    );
    const rows = (uid: number): IndexRow[] =>
      Array.from({ length: 60 }, (_, i) => i).flatMap((i) => [
        { source: 2, label: `#l${i}`, timeBucket: HOUR + (i % 7), bytes: 100 + ((i * 37) % 60) },
        { source: 1, label: `r/l${i}`, timeBucket: HOUR + (i % 5), bytes: 10 + i + uid },
        ...(i % 7 === uid
          ? [{ source: 2 as const, label: null, timeBucket: HOUR + i, bytes: 170 }]
          : []),
      ]);
    await repository.replaceMinerIndex(0, rows(0));
    await repository.replaceMinerIndex(1, rows(1));
    const totals = () =>
      database.query<Record<string, unknown>[]>(
        `SELECT miner_uid, source, time_bucket, bytes::text, largest_label_id, largest_bytes::text
         FROM miner_bucket_totals ORDER BY 1, 2, 3`,
      );
    const written = await totals();
    expect(written.some((row) => row.largest_label_id === null)).toBe(true);

    await inTransaction((runner) => migration.down(runner));
    await inTransaction((runner) => migration.up(runner));

    expect(await totals()).toEqual(written);
  });
});
