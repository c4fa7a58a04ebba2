import { DataSource } from 'typeorm';
import { Clock } from '../../src/common/clock/clock';
import { formatClockSimulation } from '../../src/common/clock/clock-simulation';
import { IndexSyncService } from '../../src/network/index-sync/index-sync.service';
import { foldObservation } from '../../src/network/credibility-recorder';
import { MinersRepository } from '../../src/network/miners.repository';
import { NetworkService } from '../../src/network/network.service';
import { oldestUsefulBucket } from '../../src/network/protocol';
import { createDatabase, dropDatabase, scratchDatabaseName } from '../support/database';
import { startTestNetwork, TestNetwork } from '../support/network';
import { startTestApp, TEST_MASTER_KEY, TestApp } from '../support/test-app';
import { syncIndexNow } from '../support/index-sync';
import { until } from '../support/until';
import { HOSTED_DATE } from '../support/items';

const OVERCLAIMER = 3;
const MANUAL_SYNC = {
  INDEX_SYNC_ON_START: 'false',
  INDEX_SPOT_CHECKS: '10',
  QUERY_CACHE_TTL_SECONDS: '0',
  // Every miner is spot-checked: beside a validator (1 bucket call an hour) that would leave
  // query_bucket no call. This gateway has the hotkey to itself, and query_bucket may take the
  // last calls the checks before it leave (no share kept for the checks after).
  VALIDATOR_SHARES_HOTKEY: 'false',
  INDEX_SPOT_CHECK_RESERVE: '0',
};

interface LabelRow {
  label_value: string;
  content_size_bytes: number;
  adj_content_size_bytes: number;
}

describe('Statistics over the synced miner index', () => {
  let network: TestNetwork;
  let app: TestApp;
  let database: DataSource;

  beforeAll(async () => {
    network = await startTestNetwork([{}, {}, {}, { behaviour: { overclaimSizes: 3 } }]);
    app = await startTestApp({ ...network.env, ...MANUAL_SYNC }, { ownDatabase: true });
    database = app.app.get(DataSource);
    await sync();
  });
  afterAll(async () => {
    await app.close();
    await network.stop();
  });

  const sync = () => syncIndexNow(app);
  const get = (path: string) => app.http.get(`/api/v1/${path}`).set('X-API-Key', TEST_MASTER_KEY);

  /** The original's full GROUP BY over the index: the answer the aggregates must equal. */
  async function bruteForceLabels(
    source: number,
  ): Promise<Map<string, { bytes: number; adj: number }>> {
    const rows = await database.query<{ label: string; bytes: string; adj: number }[]>(
      `SELECT l.value AS label, sum(i.content_size_bytes) AS bytes, sum(i.content_size_bytes * m.credibility) AS adj
       FROM miner_index i JOIN miners m ON m.uid = i.miner_uid JOIN labels l ON l.id = i.label_id
       WHERE i.source = $1 GROUP BY l.value`,
      [source],
    );
    return new Map(rows.map((row) => [row.label, { bytes: Number(row.bytes), adj: row.adj }]));
  }

  async function expectLabelsMatchBruteForce(path: string, source: number) {
    const expected = await bruteForceLabels(source);
    const response = await get(path).expect(200);
    const rows = response.body as LabelRow[];
    expect(rows).toHaveLength(expected.size);
    for (const row of rows) {
      expect(row.content_size_bytes).toBe(expected.get(row.label_value)!.bytes);
      expect(
        Math.abs(row.adj_content_size_bytes - expected.get(row.label_value)!.adj),
      ).toBeLessThanOrEqual(1);
    }
    const adj = rows.map((row) => row.adj_content_size_bytes);
    expect([...adj].sort((a, b) => b - a)).toEqual(adj);
  }

  it('fills the index from every miner', async () => {
    const counts = await database.query<{ miner_uid: number; rows: string }[]>(
      'SELECT miner_uid, count(*) AS rows FROM miner_index GROUP BY miner_uid ORDER BY miner_uid',
    );
    expect(counts.map((row) => row.miner_uid)).toEqual([0, 1, 2, 3]);
    for (const uid of [0, 1, 2, 3]) expect(network.devnet.requestCounts(uid).GetMinerIndex).toBe(1);
  });

  it('answers top labels and bytes by label exactly as a GROUP BY over the index', async () => {
    await expectLabelsMatchBruteForce('get_top_labels_by_source/X', 2);
    await expectLabelsMatchBruteForce('get_top_labels_by_source/reddit', 1);
    const expected = (await bruteForceLabels(2)).get('#bitcoin')!;
    const response = await get('get_bytes_by_label?label=%20%23BitCoin%20').expect(200);
    expect(response.body.label).toBe('#bitcoin');
    expect(response.body.total_bytes).toBe(expected.bytes);
    expect(Math.abs(response.body.adj_total_bytes - expected.adj)).toBeLessThan(0.01);
  });

  it('answers ages exactly as a GROUP BY over the index, newest first', async () => {
    const expected = await database.query<{ bucket: number; bytes: string; adj: number }[]>(
      `SELECT i.time_bucket AS bucket, sum(i.content_size_bytes) AS bytes, sum(i.content_size_bytes * m.credibility) AS adj
       FROM miner_index i JOIN miners m ON m.uid = i.miner_uid
       WHERE i.source = 2 AND i.time_bucket >= $1
       GROUP BY i.time_bucket ORDER BY i.time_bucket DESC LIMIT 1000`,
      // The window /ages lists: an hour that aged out since the sync is still in the index.
      [oldestUsefulBucket(new Date())],
    );
    const response = await get('ages?source=x').expect(200);
    expect(response.body.map((row: { time_bucket_id: number }) => row.time_bucket_id)).toEqual(
      expected.map((row) => row.bucket),
    );
    response.body.forEach(
      (row: { content_size_bytes: number; adj_content_size_bytes: number }, index: number) => {
        expect(row.content_size_bytes).toBe(Number(expected[index].bytes));
        expect(Math.abs(row.adj_content_size_bytes - expected[index].adj)).toBeLessThanOrEqual(1);
      },
    );
  });

  // On-demand and set_desirabilities read these spellings as the label; here they were zeros.
  it('reads a label as on-demand keywords are read: /r/x and /x as r/x, $tag as #tag', async () => {
    const labels = await bruteForceLabels(1);
    const [reddit] = [...labels.keys()].filter((label) => label.startsWith('r/'));
    for (const spelling of [`/${reddit}`, `/${reddit.slice(2)}`, ` R/${reddit.slice(2)}/ `]) {
      const response = await get(`get_bytes_by_label?label=${encodeURIComponent(spelling)}`).expect(
        200,
      );
      expect(response.body).toMatchObject({
        label: reddit,
        total_bytes: labels.get(reddit)!.bytes,
      });
    }
    const bitcoin = (await bruteForceLabels(2)).get('#bitcoin')!;
    const cashtag = await get('get_bytes_by_label?label=%24BitCoin').expect(200);
    expect(cashtag.body).toMatchObject({ label: '#bitcoin', total_bytes: bitcoin.bytes });
  });

  it('gives zeros for an unknown label', async () => {
    const response = await get('get_bytes_by_label?label=%23nothing-here').expect(200);
    expect(response.body).toEqual({ label: '#nothing-here', total_bytes: 0, adj_total_bytes: 0 });
  });

  it('lowers the credibility of the miner that over-claims its sizes', async () => {
    const after = await database.query<{ uid: number; credibility: number }[]>(
      'SELECT uid, credibility FROM miners WHERE uid < 4 ORDER BY uid',
    );
    const byUid = new Map(after.map((row) => [row.uid, row.credibility]));
    expect(byUid.get(OVERCLAIMER)!).toBeLessThan(0.5);
    for (const uid of [0, 1, 2]) expect(byUid.get(uid)!).toBeGreaterThanOrEqual(0.5);
  });

  it('moves the adjusted figures as soon as a credibility changes', async () => {
    await app.app.get(NetworkService).settled();
    const before = (await get('get_bytes_by_label?label=%23bitcoin').expect(200)).body;
    const [{ credibility, hotkey }] = await database.query<
      { credibility: number; hotkey: string }[]
    >('SELECT credibility, hotkey FROM miners WHERE uid = 0');
    const [{ bytes }] = await database.query<{ bytes: string }[]>(
      `SELECT coalesce(sum(t.bytes), 0) AS bytes FROM miner_label_totals t JOIN labels l ON l.id = t.label_id WHERE t.miner_uid = 0 AND l.value = '#bitcoin'`,
    );
    const values = await app.app
      .get(MinersRepository)
      .applyCredibilityUpdates([foldObservation(undefined, { uid: 0, hotkey }, 0, 0.5)]);
    const change = values.get(0)! - credibility;
    const after = (await get('get_bytes_by_label?label=%23bitcoin').expect(200)).body;
    expect(after.total_bytes).toBe(before.total_bytes);
    expect(after.adj_total_bytes).toBeCloseTo(before.adj_total_bytes + change * Number(bytes), 0);
    await expectLabelsMatchBruteForce('get_top_labels_by_source/x', 2);
  });

  it('answers query_bucket from the most credible miner holding the newest bucket', async () => {
    await app.app.get(NetworkService).settled();
    // Chosen before the request: answering moves the miner's credibility (the fetch is checked).
    const [expected] = await database.query<{ uid: number; bucket: number }[]>(
      `SELECT i.miner_uid AS uid, i.time_bucket AS bucket
       FROM miner_index i JOIN miners m ON m.uid = i.miner_uid JOIN labels l ON l.id = i.label_id
       WHERE i.source = 2 AND l.value = '#bitcoin' AND m.state = 'active'
       ORDER BY i.time_bucket DESC, m.credibility DESC, m.uid LIMIT 1`,
    );
    const response = await get('query_bucket/x?label=%23bitcoin').expect(200);
    expect(response.body).toMatchObject({
      status: 'success',
      miner: { hotkey: expect.any(String), uid: expected.uid },
      bucket: {
        id: expected.bucket,
        source: 'X',
        label: '#bitcoin',
        expected_size: expect.any(Number),
      },
    });
    const { bucket, data } = response.body;
    // A cashtag names the hashtag's label, as an on-demand keyword does.
    const cashtag = await get('query_bucket/x?label=%24BitCoin').expect(200);
    expect(cashtag.body).toMatchObject({ status: 'success', bucket: { id: bucket.id } });
    expect(data.length).toBeGreaterThan(0);
    for (const entity of data) {
      expect(entity.label).toBe('#bitcoin');
      // Its items' dates as on-demand answers write them (the hosted API's form).
      expect(entity.datetime).toMatch(HOSTED_DATE);
      expect(Date.parse(entity.datetime)).toBeGreaterThanOrEqual(Date.parse(bucket.start));
      expect(Date.parse(entity.datetime)).toBeLessThan(Date.parse(bucket.end));
    }
  });

  it("documents as required every field of query_bucket's bucket, its label (null for none) included", async () => {
    const { body } = await get('query_bucket/x').expect(200);
    expect(body.status).toBe('success');
    const document = (await app.http.get('/openapi.json').expect(200)).body as {
      components: { schemas: Record<string, { required?: string[] }> };
    };
    const sent = Object.keys(body.bucket as object).sort();
    expect(sent).toContain('label');
    // Optional in the schema, generated clients typed it `label?: string | null`, and validators
    // let an answer without it pass, though every bucket answered sends it.
    expect([...(document.components.schemas.BucketDescription.required ?? [])].sort()).toEqual(
      sent,
    );
  });

  it('answers query_bucket with status error when nothing is in range', async () => {
    const response = await get('query_bucket/reddit?start_bucket=1&end_bucket=2').expect(200);
    expect(response.body).toEqual({ status: 'error', message: expect.stringContaining('No data') });
  });

  it('starts query_bucket at bucket 0 when end_bucket − 24 would be before it', async () => {
    const response = await get('query_bucket/reddit?end_bucket=5').expect(200);
    expect(response.body).toEqual({
      status: 'error',
      message: 'No data for any label in buckets 0..5',
    });
  });

  it("ends query_bucket's default range at the last whole hour of the service's clock", async () => {
    const hour = 3_600_000;
    const simulated = await startTestApp({
      CLOCK_SIMULATION: formatClockSimulation({
        startMs: 1_000 * hour + 60_000,
        anchorMs: Date.now(),
        rate: 1,
      }),
    });
    try {
      const response = await simulated.http
        .get('/api/v1/query_bucket/reddit')
        .set('X-API-Key', TEST_MASTER_KEY)
        .expect(200);
      // The range is what is checked (this app loads no index: the answer says so).
      expect(response.body.message).toContain('for any label in buckets 975..999');
    } finally {
      await simulated.close();
    }
  });

  // After the query_bucket tests: the spot checks of its sync take the bucket calls of every
  // miner, the two whose index it rejects included (checked on their stored index), that
  // query_bucket needs.
  it('rejects a malformed or oversize index and keeps the previous one', async () => {
    // Every sync also drops the hours that aged out: an hour turning between the two syncs takes
    // the oldest hour's rows (a CI run saw 2336 become 2334). Count the hours no sync drops soon.
    const kept = oldestUsefulBucket(new Date()) + 1;
    const rowsOf = async (uid: number) =>
      Number(
        (
          await database.query<{ n: string }[]>(
            'SELECT count(*) AS n FROM miner_index WHERE miner_uid = $1 AND time_bucket >= $2',
            [uid, kept],
          )
        )[0].n,
      );
    const before = [await rowsOf(1), await rowsOf(2)];
    const [cred1, cred2] = (
      await database.query<{ credibility: number }[]>(
        'SELECT credibility FROM miners WHERE uid IN (1, 2) ORDER BY uid',
      )
    ).map((row) => row.credibility);
    network.devnet.setBehaviour(1, { wrongSchema: true, endpoints: ['GetMinerIndex'] });
    network.devnet.setBehaviour(2, { oversize: true, endpoints: ['GetMinerIndex'] });
    try {
      const report = await sync();
      expect(report.rejected).toBe(1);
      expect(report.failed).toBe(1);
      expect([await rowsOf(1), await rowsOf(2)]).toEqual(before);
      const [after1, after2] = (
        await database.query<{ credibility: number }[]>(
          'SELECT credibility FROM miners WHERE uid IN (1, 2) ORDER BY uid',
        )
      ).map((row) => row.credibility);
      expect(after1).toBeLessThan(cred1);
      expect(after2).toBeLessThan(cred2);
    } finally {
      network.devnet.setBehaviour(1, {});
      network.devnet.setBehaviour(2, {});
    }
  });

  it('rejects an empty or whitespace-only query_bucket label with 422', async () => {
    const empty = await get('query_bucket/x?label=').expect(422);
    expect(empty.body.detail).toEqual([
      expect.objectContaining({ loc: ['query', 'label'], type: 'string_too_short' }),
    ]);
    const blank = await get('query_bucket/x?label=%20%09%20').expect(422);
    expect(blank.body.detail).toEqual([
      expect.objectContaining({ loc: ['query', 'label'], type: 'string_too_short' }),
    ]);
  });

  it('takes a source in any case, surrounding white space ignored, as the README says', async () => {
    // Raw bytes only, in the label's order: the adjusted ones, which rank the rows, move with
    // credibility writes between two requests (a run saw two rows 30 bytes apart swap places).
    const raw = (body: Record<string, number | string>[]): (number | string)[][] =>
      body
        .map((row) => Object.values(row).slice(0, 2))
        .sort(([a], [b]) => String(a).localeCompare(String(b)));
    const plain = await get('get_top_labels_by_source/x').expect(200);
    const padded = await get('get_top_labels_by_source/%20X%09').expect(200);
    expect(plain.body.length).toBeGreaterThan(0);
    expect(raw(padded.body)).toEqual(raw(plain.body));
    const ages = await get('ages?source=reddit').expect(200);
    const paddedAges = await get('ages?source=%20Reddit%20').expect(200);
    expect(ages.body.length).toBeGreaterThan(0);
    expect(raw(paddedAges.body)).toEqual(raw(ages.body));
  });

  it('rejects an unknown source and non-integer buckets with 422', async () => {
    const path = await get('get_top_labels_by_source/facebook').expect(422);
    expect(path.body.detail).toEqual([expect.objectContaining({ loc: ['path', 'source'] })]);
    const query = await get('ages?source=tiktok').expect(422);
    expect(query.body.detail).toEqual([expect.objectContaining({ loc: ['query', 'source'] })]);
    const bucket = await get('query_bucket/x?end_bucket=1.5').expect(422);
    expect(bucket.body.detail).toEqual([
      expect.objectContaining({ loc: ['query', 'end_bucket'], type: 'int_parsing' }),
    ]);
    const reversed = await get('query_bucket/x?start_bucket=10&end_bucket=5').expect(422);
    expect(reversed.body.detail).toEqual([
      {
        loc: ['query', 'start_bucket'],
        msg: 'Value error, start_bucket must not be after end_bucket',
        type: 'value_error',
      },
    ]);
  });

  it('answers an ages request without a source or with an unknown one with a 422 its document lists', async () => {
    const document = (await app.http.get('/openapi.json').expect(200)).body as {
      paths: Record<
        string,
        { get: { responses: Record<string, { content: Record<string, { examples: object }> }> } }
      >;
    };
    const examples = document.paths['/api/v1/ages'].get.responses['422'].content['application/json']
      .examples as Record<string, { value: { detail: unknown } }>;
    const documented = Object.values(examples).map((example) => example.value.detail);
    for (const path of ['ages', 'ages?source=tiktok']) {
      const { body } = await get(path).expect(422);
      expect(documented).toContainEqual(body.detail);
    }
  });

  // The range's check (against now without end_bucket) ran in the service, after the DTO's: a
  // blank label hid a start_bucket in the future until the client had fixed it (an audit's).
  it('lists a start_bucket after the last complete hour and a blank label in one 422', async () => {
    const hourNow = () => Math.floor(app.app.get(Clock).now().getTime() / 3_600_000);
    /** Asked again when the hour turned while it was asked: the answer is then of another hour. */
    const inOneHour = async (path: (hour: number) => string) => {
      for (;;) {
        const hour = hourNow();
        const answer = await get(path(hour));
        if (hourNow() === hour) return { hour, answer };
      }
    };
    const { hour: currentHour, answer: both } = await inOneHour(
      (hour) => `query_bucket/x?start_bucket=${hour + 1}&label=%20`,
    );
    expect(both.status).toBe(422);
    expect(both.body.detail).toEqual([
      {
        loc: ['query', 'label'],
        msg: 'String should have at least 1 character',
        type: 'string_too_short',
        ctx: { min_length: 1 },
      },
      {
        loc: ['query', 'start_bucket'],
        msg:
          'Value error, start_bucket must not be after end_bucket (by default the last complete ' +
          `hour, ${currentHour - 1})`,
        type: 'value_error',
      },
    ]);
    // The current hour is not complete: without end_bucket, the message names the end it is
    // after, which the client never sent (a reviewer's finding).
    const { hour, answer: current } = await inOneHour(
      (now) => `query_bucket/x?start_bucket=${now}`,
    );
    expect(current.status).toBe(422);
    expect(current.body.detail).toEqual([
      {
        loc: ['query', 'start_bucket'],
        msg:
          'Value error, start_bucket must not be after end_bucket (by default the last complete ' +
          `hour, ${hour - 1})`,
        type: 'value_error',
      },
    ]);
    // Compared with an end_bucket only once that is valid: its own error says what is wrong.
    const badEnd = await get('query_bucket/x?start_bucket=10&end_bucket=-5').expect(422);
    expect(badEnd.body.detail).toEqual([
      expect.objectContaining({ loc: ['query', 'end_bucket'], type: 'greater_than_equal' }),
    ]);
  });
});

describe('Index sync across replicas', () => {
  it('runs once when two instances share a database', async () => {
    const network = await startTestNetwork(3);
    const serverUrl = process.env.TEST_RUN_SERVER_URL!;
    const name = scratchDatabaseName('sync');
    const databaseUrl = await createDatabase(serverUrl, name);
    const env = { ...network.env, DATABASE_URL: databaseUrl };
    const apps = await Promise.all([
      startTestApp({ ...env, INDEX_SYNC_ON_START: 'true' }),
      startTestApp({ ...env, INDEX_SYNC_ON_START: 'true' }),
    ]);
    try {
      const database = apps[0].app.get(DataSource);
      await until(async () => {
        const [run] = await database.query<{ status: string }[]>(
          `SELECT status FROM job_runs WHERE name = 'index-sync'`,
        );
        return run?.status === 'succeeded' ? run : undefined;
      }, 10_000);
      // Both instances also try again now: the interval has not passed, so neither runs.
      await Promise.all(apps.map((app) => app.app.get(IndexSyncService).runIfDue()));
      for (const miner of network.devnet.miners)
        expect(network.devnet.requestCounts(miner.uid).GetMinerIndex).toBe(1);
    } finally {
      await Promise.all(apps.map((app) => app.close()));
      await network.stop();
      await dropDatabase(serverUrl, name);
    }
  });
});
