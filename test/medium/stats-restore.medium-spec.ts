import { DataSource } from 'typeorm';
import { Clock } from '../../src/common/clock/clock';
import { StatsService } from '../../src/modules/stats/stats.service';
import { MinerIndexRepository } from '../../src/network/index/miner-index.repository';
import { NetworkService } from '../../src/network/network.service';
import { MediumDatabase, openMediumDatabase } from '../support/medium-database';
import { minerIndexOn } from '../support/miner-index';
import { metagraphNeuron } from '../support/neurons';
import { MinersRepository } from '../../src/network/miners.repository';

const LABEL = '#restored';
const HOUR = 490_000;

/**
 * The statistics' entity tags across a database restored from a backup (docs/decisions.md,
 * "Miner index and statistics"): the restore puts back the totals and their version as the
 * backup holds them, and a tag a client got after the backup must not name other data later.
 */
describe(`${StatsService.name} tags after a restore`, () => {
  let medium: MediumDatabase;
  let database: DataSource;
  let repository: MinerIndexRepository;
  let stats: StatsService;

  beforeAll(async () => {
    // A database of its own: the spec writes the network totals and puts back their version.
    medium = await openMediumDatabase({ own: 'statsrestore' });
    database = medium.dataSource;
    const index = minerIndexOn(database);
    repository = index.repository;
    // Only the aggregates' answers are asked for: no network.
    stats = new StatsService(index.service, {} as NetworkService, new Clock());
    await new MinersRepository(database, index.service).syncNeurons([
      metagraphNeuron(1, { axon_url: null }),
    ]);
  });
  afterAll(() => medium.close());

  const holdBytes = (bytes: number) =>
    repository.replaceMinerIndex(1, [{ source: 2, label: LABEL, timeBucket: HOUR, bytes }]);

  it('answers 200, not 304, to a tag from before the restore once the totals changed after it', async () => {
    await holdBytes(100);
    // The backup: the version row as pg_dump or a base backup holds it.
    const [backup] = await database.query<{ row: object }[]>(
      'SELECT row_to_json(v) AS row FROM aggregates_version v',
    );
    await holdBytes(200);
    const held = await stats.bytesByLabel(LABEL);
    if (held.status !== 200) throw new Error('expected an answer');
    expect(held.answer.total_bytes).toBe(200);

    // The restore writes the row back as it was (an INSERT: no UPDATE of the row runs).
    await database.transaction(async (manager) => {
      await manager.query('DELETE FROM aggregates_version');
      await manager.query(
        'INSERT INTO aggregates_version SELECT * FROM json_populate_record(NULL::aggregates_version, $1)',
        [backup.row],
      );
    });
    await holdBytes(300);

    const after = await stats.bytesByLabel(LABEL, held.tag);
    expect(after.status).toBe(200);
    expect(after.tag).not.toBe(held.tag);
  });
});
