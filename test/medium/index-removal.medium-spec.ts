import fc from 'fast-check';
import { DataSource } from 'typeorm';
import { IndexRow } from '../../src/network/index/compressed-index';
import { MinerReplacedError } from '../../src/network/index/miner-index.repository';
import { MinerIndexService } from '../../src/network/index/miner-index.service';
import { MinersRepository } from '../../src/network/miners.repository';
import { SourceId } from '../../src/network/sources';
import { expectAggregatesExact } from '../support/index-aggregates';
import { MediumDatabase, openMediumDatabase } from '../support/medium-database';
import { metagraphNeuron } from '../support/neurons';
import { minerIndexOn } from '../support/miner-index';

const UIDS = [0, 1, 2];
const HOUR = 490_000;

/** Each miner holds every label in each of six hours, sizes by uid. */
function rowsOf(uid: number): IndexRow[] {
  return ['#a', 'r/b', null].flatMap((label, i) =>
    Array.from({ length: 6 }, (_, hour) => ({
      source: (i % 2) + 1,
      label,
      timeBucket: HOUR + hour,
      bytes: 1000 * (uid + 1) + 10 * i + hour,
    })),
  ) as IndexRow[];
}

const indexRows = fc.uniqueArray(
  fc.record({
    source: fc.constantFrom<SourceId>(1, 2),
    label: fc.constantFrom('#a', '#b', 'r/c', null),
    timeBucket: fc.integer({ min: HOUR, max: HOUR + 5 }),
    bytes: fc.integer({ min: 1, max: 2 ** 40 }),
  }),
  { maxLength: 30, selector: (row) => `${row.source}|${row.label}|${row.timeBucket}` },
);

const operation = fc.oneof(
  fc.record({ replace: fc.constantFrom(...UIDS), rows: indexRows }),
  fc.record({ credibility: fc.constantFrom(...UIDS), value: fc.double({ min: 0, max: 1 }) }),
  fc.record({ newHotkey: fc.constantFrom(...UIDS) }),
  fc.record({ deregister: fc.constantFrom(...UIDS) }),
  fc.record({ stale: fc.constantFrom(...UIDS) }),
  fc.record({ hoursBefore: fc.integer({ min: HOUR, max: HOUR + 6 }) }),
);

describe('Dropping miner indexes', () => {
  let medium: MediumDatabase;
  let database: DataSource;
  let index: MinerIndexService;
  let miners: MinersRepository;
  /** The metagraph as the tests change it: uid → hotkey (absent: deregistered). */
  let hotkeys: Map<number, string>;
  let renames = 0;

  beforeAll(async () => {
    // A database of its own: the spec owns the miners table and the network totals.
    medium = await openMediumDatabase({ own: 'index-removal' });
    database = medium.dataSource;
    index = minerIndexOn(database).service;
    miners = new MinersRepository(database, index);
  });
  afterAll(() => medium.close());

  beforeEach(async () => {
    hotkeys = new Map(UIDS.map((uid) => [uid, `hotkey-${uid}-${renames++}`]));
    await applyMetagraph();
    for (const uid of UIDS) await index.replaceMinerIndex(uid, rowsOf(uid));
  });

  /** Applies the metagraph of `hotkeys`, with `validators` among its uids. */
  function applyMetagraph(validators: number[] = []) {
    return miners.syncNeurons(
      [...hotkeys].map(([uid, hotkey]) =>
        metagraphNeuron(uid, {
          hotkey,
          axon_url: null,
          ...(validators.includes(uid) ? { validator_permit: true, stake: 50_000 } : {}),
        }),
      ),
      { validators: new Set(validators) },
    );
  }

  /** Sets a credibility the way the service does, moving the adjusted totals. */
  const setCredibility = (uid: number, value: number) =>
    miners.applyCredibilityUpdates([{ uid, hotkey: hotkeys.get(uid)!, decay: 0, add: value }]);

  async function indexedRows(uid: number): Promise<number> {
    const [{ count }] = await database.query<{ count: number }[]>(
      'SELECT count(*)::int AS count FROM miner_index WHERE miner_uid = $1',
      [uid],
    );
    return count;
  }

  async function minerRow(uid: number) {
    const [row] = await database.query<
      { hotkey: string; credibility: number; state: string; index_buckets: number }[]
    >('SELECT hotkey, credibility, state, index_buckets FROM miners WHERE uid = $1', [uid]);
    return row;
  }

  async function smallestAdjusted(): Promise<number> {
    const [{ least }] = await database.query<{ least: number }[]>(
      `SELECT least((SELECT min(adj_bytes) FROM label_totals), (SELECT min(adj_bytes) FROM bucket_totals)) AS least`,
    );
    return least;
  }

  it.each([0.6, 0.3])(
    'drops the index of a uid whose hotkey changes at the credibility it was counted at (%s), and starts it over',
    async (credibility) => {
      await setCredibility(0, 0.8);
      await setCredibility(1, credibility);
      await expectAggregatesExact(database);

      hotkeys.set(1, 'hotkey-1-new-owner');
      const { hotkeyChanged, indexesDropped } = await applyMetagraph();

      expect({ hotkeyChanged, indexesDropped }).toEqual({
        hotkeyChanged: [1],
        indexesDropped: [1],
      });
      expect(await minerRow(1)).toMatchObject({
        hotkey: 'hotkey-1-new-owner',
        credibility: 0.5,
        index_buckets: 0,
      });
      expect(await indexedRows(1)).toBe(0);
      await expectAggregatesExact(database);
      expect(await smallestAdjusted()).toBeGreaterThan(0);
      // The others keep their index and credibility.
      expect(await indexedRows(0)).toBe(rowsOf(0).length);
      expect((await minerRow(0)).credibility).toBe(0.8);
    },
  );

  it('drops the index of a uid that leaves the metagraph, and of one deregistered before', async () => {
    await setCredibility(2, 0.7);
    // As an earlier version left it: deregistered, its index still counted.
    await database.query(`UPDATE miners SET state = 'deregistered' WHERE uid = 0`);
    hotkeys.delete(0);
    hotkeys.delete(2);

    const { indexesDropped } = await applyMetagraph();

    expect(indexesDropped).toEqual([0, 2]);
    expect(await minerRow(2)).toMatchObject({ state: 'deregistered', credibility: 0.7 });
    expect([await indexedRows(0), await indexedRows(1), await indexedRows(2)]).toEqual([
      0,
      rowsOf(1).length,
      0,
    ]);
    await expectAggregatesExact(database);
    // Only uid 1 is counted now.
    const [{ bytes }] = await database.query<{ bytes: string }[]>(
      'SELECT sum(bytes)::text AS bytes FROM bucket_totals',
    );
    expect(Number(bytes)).toBe(rowsOf(1).reduce((sum, row) => sum + row.bytes, 0));
  });

  // An index sync runs for minutes; a metagraph applied meanwhile may give the uid to another
  // hotkey, deregister it or make it a validator. The old owner's index stored under the uid was
  // the new owner's (an audit's finding), and a new validator's index came back after its drop.
  it('stores a fetched index only while the uid is still the miner it came from', async () => {
    const from = (hotkey: string) => ({ hotkey, validatorMinStake: 10_000 });
    const fetchedFrom = hotkeys.get(1)!;
    hotkeys.set(1, 'hotkey-1-new-owner');
    await applyMetagraph();
    await expect(index.replaceMinerIndex(1, rowsOf(1), from(fetchedFrom))).rejects.toThrow(
      MinerReplacedError,
    );
    expect(await indexedRows(1)).toBe(0);
    expect((await minerRow(1)).index_buckets).toBe(0);

    const deregistered = hotkeys.get(2)!;
    hotkeys.delete(2);
    await applyMetagraph();
    await expect(index.replaceMinerIndex(2, rowsOf(2), from(deregistered))).rejects.toThrow(
      MinerReplacedError,
    );
    expect(await indexedRows(2)).toBe(0);

    await applyMetagraph([0]);
    await expect(index.replaceMinerIndex(0, rowsOf(0), from(hotkeys.get(0)!))).rejects.toThrow(
      MinerReplacedError,
    );
    expect(await indexedRows(0)).toBe(0);

    await index.replaceMinerIndex(1, rowsOf(1), from('hotkey-1-new-owner'));
    expect(await indexedRows(1)).toBe(rowsOf(1).length);
    await expectAggregatesExact(database);
  });

  // No index sync asks a validator, so its index would stay, stale, in the statistics and be
  // picked for stored-data calls (an audit's finding).
  it('drops the index of a neuron that became a validator, at its credibility, keeping its row', async () => {
    await setCredibility(1, 0.6);

    const { hotkeyChanged, indexesDropped } = await applyMetagraph([1]);

    expect({ hotkeyChanged, indexesDropped }).toEqual({ hotkeyChanged: [], indexesDropped: [1] });
    expect(await minerRow(1)).toMatchObject({
      state: 'active',
      credibility: 0.6,
      index_buckets: 0,
    });
    expect([await indexedRows(0), await indexedRows(1), await indexedRows(2)]).toEqual([
      rowsOf(0).length,
      0,
      rowsOf(2).length,
    ]);
    await expectAggregatesExact(database);
    // Applied again, there is nothing left to drop.
    expect((await applyMetagraph([1])).indexesDropped).toEqual([]);
  });

  it('drops the indexes of miners that missed the syncs given in a row, at their credibility, whatever their age', async () => {
    await setCredibility(1, 0.3);
    // Long past, as after an outage of the gateway: the age does not count.
    await database.query(`UPDATE miners SET index_synced_at = now() - interval '4 days'`);
    await index.countMissedSyncs([1, 2]);
    await index.countMissedSyncs([1, 2]);
    expect(await index.dropStaleIndexes(3)).toEqual([]);
    await index.countMissedSyncs([1, 2]);
    // A successful sync starts the count over.
    await index.replaceMinerIndex(2, rowsOf(2));

    expect(await index.dropStaleIndexes(3)).toEqual([1]);

    expect([await indexedRows(0), await indexedRows(1), await indexedRows(2)]).toEqual([
      rowsOf(0).length,
      0,
      rowsOf(2).length,
    ]);
    await expectAggregatesExact(database);
    expect(await index.dropStaleIndexes(3)).toEqual([]);
  });

  it("stops a miner's count of missed syncs at the column's top instead of failing the count", async () => {
    await database.query('UPDATE miners SET index_missed_syncs = 32766 WHERE uid = 1');

    await index.countMissedSyncs([0, 1]);
    await index.countMissedSyncs([0, 1]);

    const rows = await database.query<{ uid: number; missed: number }[]>(
      'SELECT uid, index_missed_syncs AS missed FROM miners WHERE uid IN (0, 1) ORDER BY uid',
    );
    expect(rows).toEqual([
      { uid: 0, missed: 2 },
      { uid: 1, missed: 32767 },
    ]);
  });

  it('removes the hours before the one given from every index, and their bytes from the totals', async () => {
    await setCredibility(2, 0.9);

    // Three labels (one of them none) in each of the hours HOUR and HOUR + 1, for three miners.
    expect(await index.dropHoursBefore(HOUR + 2)).toBe(18);

    const hours = await database.query<{ hour: number }[]>(
      'SELECT DISTINCT time_bucket AS hour FROM miner_index ORDER BY 1',
    );
    expect(hours.map((row) => row.hour)).toEqual([HOUR + 2, HOUR + 3, HOUR + 4, HOUR + 5]);
    expect((await minerRow(2)).index_buckets).toBe(rowsOf(2).length - 6);
    await expectAggregatesExact(database);
    expect(await index.dropHoursBefore(HOUR + 2)).toBe(0);
    // The hour just before the one given goes too.
    expect(await index.dropHoursBefore(HOUR + 3)).toBeGreaterThan(0);
    const left = await database.query<{ hour: number }[]>(
      'SELECT min(time_bucket) AS hour FROM miner_index',
    );
    expect(left[0].hour).toBe(HOUR + 3);
    await expectAggregatesExact(database);
  });

  it('keeps every aggregate equal to a GROUP BY over the index through replaces, credibility changes and drops', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(operation, { minLength: 1, maxLength: 5 }), async (operations) => {
        for (const op of operations) {
          if ('replace' in op) {
            if (hotkeys.has(op.replace)) await index.replaceMinerIndex(op.replace, op.rows);
          } else if ('credibility' in op) {
            await setCredibility(op.credibility, op.value);
          } else if ('newHotkey' in op) {
            hotkeys.set(op.newHotkey, `hotkey-${op.newHotkey}-${renames++}`);
            await applyMetagraph();
          } else if ('deregister' in op) {
            // At most one uid away at a time; the one away before comes back.
            hotkeys = new Map(UIDS.map((uid) => [uid, hotkeys.get(uid) ?? `back-${renames++}`]));
            hotkeys.delete(op.deregister);
            await applyMetagraph();
          } else if ('stale' in op) {
            await database.query('UPDATE miners SET index_missed_syncs = 3 WHERE uid = $1', [
              op.stale,
            ]);
            await index.dropStaleIndexes(3);
          } else {
            await index.dropHoursBefore(op.hoursBefore);
          }
        }
        await expectAggregatesExact(database);
      }),
      { numRuns: 20 },
    );
  });
});
