import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DataSource } from 'typeorm';
import { Clock } from '../../src/common/clock/clock';
import { devnetKeyUri } from '../../src/devnet/metagraph';
import { legacyJobId } from '../../src/modules/desirability/legacy-job-id';
import { Sr25519Keypair } from '../../src/network/bittensor/keypair';
import { createDatabase, dropDatabase, scratchDatabaseName } from '../support/database';
import { createKey } from '../support/fixtures';
import { startTestNetwork, TestNetwork } from '../support/network';
import { startTestApp, TEST_MASTER_KEY, TestApp } from '../support/test-app';
import { expectDeclaredJobOrder } from '../support/job-order';

const DAY = 24 * 3600 * 1000;
const ROOT = ['body', 'desirabilities'];

/** The owner's default list used by these tests: normalized, 0.5 / 0.25 / 0.25. */
const OWNER_LIST = [
  { id: 'owner-btc', weight: 2, params: { platform: 'x', label: '#bitcoin' } },
  { id: 'owner-eth', weight: 1, params: { platform: 'reddit', label: 'r/ethereum' } },
  { id: 'owner-subnet', weight: 1, params: { platform: 'reddit', keyword: 'subnet' } },
];

function job(
  id: string,
  weight: number,
  label: string | null,
  extra: Record<string, unknown> = {},
) {
  const platform = label?.startsWith('r/') ? 'reddit' : 'x';
  return {
    id,
    weight,
    params: {
      platform,
      label,
      keyword: null,
      post_start_datetime: null,
      post_end_datetime: null,
      ...extra,
    },
  };
}

/** Test apps keep their state away from other test files: own DATA_DIR, no lifecycle ticks. */
function appEnvironment(
  directory: string,
  extra: Record<string, string> = {},
): Record<string, string> {
  const ownerFile = join(directory, 'owner.json');
  writeFileSync(ownerFile, JSON.stringify(OWNER_LIST));
  return {
    DEFAULT_DESIRABILITIES_FILE: ownerFile,
    DATA_DIR: directory,
    TASK_LIFECYCLE_TICK: '86400',
    ...extra,
  };
}

interface JobEntry {
  id: string;
  weight: number;
  params: Record<string, unknown>;
}

describe('Desirability submissions', () => {
  const HOTKEY_URI = '//Submissions';
  const HOTKEY = Sr25519Keypair.fromUri(HOTKEY_URI).address;
  const NEVER_VOTED = Sr25519Keypair.fromUri('//NeverVoted').address;
  let directory: string;
  let app: TestApp;
  let database: DataSource;

  beforeAll(async () => {
    directory = mkdtempSync(join(tmpdir(), 'gateway-desirability-'));
    app = await startTestApp(appEnvironment(directory, { VALIDATOR_HOTKEY_URI: HOTKEY_URI }), {
      ownDatabase: true,
    });
    database = app.app.get(DataSource);
  });
  afterAll(async () => {
    await app.close();
    rmSync(directory, { recursive: true, force: true });
  });

  const submit = (body: unknown, key = TEST_MASTER_KEY) =>
    app.http
      .post('/api/v1/set_desirabilities')
      .set('X-API-Key', key)
      .send(body as object);
  const get = (query = '') =>
    app.http.get(`/api/v1/get_desirabilities${query}`).set('X-API-Key', TEST_MASTER_KEY);
  const registration = async (id: string) =>
    (
      await database.query<{ registered_at: Date; expires_at: Date; registered_by: string }[]>(
        'SELECT registered_at, expires_at, registered_by FROM scraping_tasks WHERE id = $1',
        [id],
      )
    )[0];

  const weightOf = async (id: string) =>
    (
      await database.query<{ weight: number }[]>(
        'SELECT weight FROM scraping_tasks WHERE id = $1',
        [id],
      )
    )[0].weight;

  it('accepts both formats mixed, registers every job and lists its task ids', async () => {
    const body = {
      desirabilities: [
        { id: 'mixed-tao', weight: 3, params: { platform: 'X', label: '#TAO', keyword: 'subnet' } },
        { source_name: 'Reddit', label_weights: { '/r/Bitcoin': 0.5, 'r/ethereum': 0.5 } },
      ],
    };
    const response = await submit(body).expect(200);
    const bitcoin = legacyJobId('reddit', 'r/bitcoin');
    const ethereum = legacyJobId('reddit', 'r/ethereum');
    expect(response.body).toEqual({
      status: 'success',
      message: `Vote of ${HOTKEY} saved: 3 jobs (3 newly registered tasks); local only, not published to the network (GRAVITY_REPO_URL and SUBTENSOR_URL not set)`,
      tasks: ['mixed-tao', bitcoin, ethereum],
      // Without a Gravity repository and a chain (the devnet default), the vote stays local.
      publication: 'disabled',
    });
    for (const id of response.body.tasks)
      expect((await registration(id)).registered_by).toBe(HOTKEY);

    // Stored as submitted, and normalized: weights 3 : 0.5 : 0.5 over the whole submission.
    const submitted = await get(`?hotkey=${HOTKEY}`).expect(200);
    expect(submitted.body).toEqual(body.desirabilities);
    // Its jobs: a legacy entry counts one per label, as the submission rules count them.
    expect(submitted.headers['x-total-count']).toBe('3');
    const [vote] = await database.query<{ jobs: JobEntry[] }[]>(
      'SELECT jobs FROM desirability_votes WHERE hotkey = $1',
      [HOTKEY],
    );
    expect(vote.jobs).toEqual([
      job('mixed-tao', 0.75, '#tao', { keyword: 'subnet' }),
      job(bitcoin, 0.125, 'r/bitcoin'),
      job(ethereum, 0.125, 'r/ethereum'),
    ]);

    // The aggregate lists the vote's jobs (read from jsonb) with their keys as the owner's are.
    const aggregate = await get().expect(200);
    expect(aggregate.body.map((entry: JobEntry) => entry.id)).toEqual(
      expect.arrayContaining(['mixed-tao', bitcoin, 'owner-btc']),
    );
    for (const entry of aggregate.body as JobEntry[]) {
      expectDeclaredJobOrder(entry);
    }
  });

  it('lets only validator-class keys submit', async () => {
    const regular = await createKey(app, { tier: 'regular' });
    const denied = await submit({ desirabilities: [] }, regular.key).expect(403);
    expect(denied.body).toMatchObject({ detail: 'This operation requires a validator key' });
    const validator = await createKey(app, { tier: 'validator' });
    await submit({ desirabilities: [] }, validator.key).expect(200);
    await app.http.post('/api/v1/set_desirabilities').send({ desirabilities: [] }).expect(401);
  });

  // The rules themselves are tested once, where they live (desirability-parser.spec.ts); here
  // one refusal proves the wiring: every violation in the 422 shape, and nothing stored.
  it('reports every violation at once and stores nothing', async () => {
    await submit({ desirabilities: [job('all-at-once-kept', 1, '#kept')] }).expect(200);
    const response = await submit({
      desirabilities: [
        { id: 'a/b', weight: 0, params: { platform: 'x', label: 'tao' } },
        { source_name: 'reddit', label_weights: { 'r/ok': 1, 'no-prefix': -1 } },
        {
          id: 'c',
          weight: 1,
          params: { platform: 'tiktok', keyword: 'k'.repeat(141), post_start_datetime: 'soon' },
        },
      ],
      extra: 1,
    }).expect(422);
    expect(response.body.detail).toEqual([
      {
        loc: [...ROOT, 0, 'id'],
        msg: "Value error, id must not contain '/' or '\\'",
        type: 'value_error',
      },
      {
        loc: [...ROOT, 0, 'weight'],
        msg: 'Input should be greater than 0',
        type: 'greater_than',
        ctx: { gt: 0 },
      },
      {
        loc: [...ROOT, 0, 'params', 'label'],
        msg: 'Value error, X labels are hashtags: # followed by the tag, without spaces',
        type: 'value_error',
      },
      {
        loc: [...ROOT, 1, 'label_weights', 'no-prefix', '[key]'],
        msg: 'Value error, Reddit labels are subreddits: r/<name> (or /r/<name>, /<name>), without spaces',
        type: 'value_error',
      },
      {
        loc: [...ROOT, 1, 'label_weights', 'no-prefix'],
        msg: 'Input should be greater than 0',
        type: 'greater_than',
        ctx: { gt: 0 },
      },
      {
        loc: [...ROOT, 2, 'params', 'platform'],
        msg: "Input should be 'x' or 'reddit'",
        type: 'enum',
        ctx: { expected: "'x' or 'reddit'" },
      },
      {
        loc: [...ROOT, 2, 'params', 'keyword'],
        msg: 'String should have at most 140 characters',
        type: 'string_too_long',
        ctx: { max_length: 140 },
      },
      {
        loc: [...ROOT, 2, 'params', 'post_start_datetime'],
        msg:
          'Value error, must be a date (YYYY-MM-DD) or a date-time (YYYY-MM-DDTHH:MM[:SS[.fraction]], ' +
          'T or a space between date and time, up to 9 fraction digits), with an optional zone (Z, ±HH, ±HHMM or ±HH:MM; none is UTC), ' +
          'e.g. 2026-11-20 or 2026-11-20T12:00:00Z',
        type: 'value_error',
      },
      { loc: ['body', 'extra'], msg: 'Extra inputs are not permitted', type: 'extra_forbidden' },
    ]);
    expect((await get(`?hotkey=${HOTKEY}`).expect(200)).body).toEqual([
      job('all-at-once-kept', 1, '#kept'),
    ]);
    expect(await registration('c')).toBeUndefined();
  });

  // A reviewer's request: both weights were `float_parsing`, which pydantic keeps for strings.
  it('refuses a weight that is no number as pydantic does, and reads a string of one', async () => {
    const refused = await submit({
      desirabilities: [
        { id: 'w', weight: null, params: { platform: 'x', label: '#a' } },
        { source_name: 'x', label_weights: { '#b': {} } },
      ],
    }).expect(422);
    expect(refused.body.detail).toEqual([
      { loc: [...ROOT, 0, 'weight'], msg: 'Input should be a valid number', type: 'float_type' },
      {
        loc: [...ROOT, 1, 'label_weights', '#b'],
        msg: 'Input should be a valid number',
        type: 'float_type',
      },
    ]);
    const body = {
      desirabilities: [
        { id: 'string-weight', weight: '0.5', params: { platform: 'x', label: '#string' } },
        { source_name: 'x', label_weights: { '#strings': '1.5' } },
      ],
    };
    await submit(body).expect(200);
    expect((await get(`?hotkey=${HOTKEY}`).expect(200)).body).toEqual([
      { id: 'string-weight', weight: 0.5, params: { platform: 'x', label: '#string' } },
      { source_name: 'x', label_weights: { '#strings': 1.5 } },
    ]);
    expect(await weightOf('string-weight')).toBe(0.25);
  });

  it('pages the legacy format by label, so that a label is whole on one page', async () => {
    // r/bitcoin is the heaviest label and, with a keyword, the lightest job too.
    await submit({
      desirabilities: [
        job('paged-btc', 40, 'r/bitcoin'),
        job('paged-tao', 30, '#tao'),
        job('paged-ai', 20, '#ai'),
        job('paged-btc-etf', 1, 'r/bitcoin', { keyword: 'etf' }),
      ],
    }).expect(200);
    type Entry = { source_name: string; label_weights: Record<string, number> };
    const whole = await get('?format=legacy').expect(200);
    const labels = (entries: Entry[]) =>
      entries.flatMap((entry) => Object.keys(entry.label_weights).map((label) => label));
    expect(whole.headers['x-total-count']).toBe(String(labels(whole.body).length));
    const pages: Entry[][] = [];
    for (let offset = 0; offset < labels(whole.body).length; offset += 2)
      pages.push((await get(`?format=legacy&limit=2&offset=${offset}`).expect(200)).body);
    // Each label on one page only, with the weight the whole list gives it.
    const paged = pages.flat().flatMap((entry) => Object.entries(entry.label_weights));
    const unpaged = whole.body.flatMap((entry: Entry) => Object.entries(entry.label_weights));
    // (The unpaged answer groups labels by platform; pages cut the list heaviest first.)
    expect(paged.map(([label]) => label).sort()).toEqual(labels(whole.body).sort());
    expect(Object.fromEntries(paged)).toEqual(Object.fromEntries(unpaged));
    // The sum of its jobs (0.7 × 40/91 and 0.7 × 1/91), rounded once to 12 significant digits:
    // the sum of the jobs as the jobs format lists them, each rounded, was 0.315384615384.
    const jobs = (await get().expect(200)).body as JobEntry[];
    const parts = jobs.filter((entry) => entry.params.label === 'r/bitcoin');
    expect(parts.map((entry) => entry.weight)).toEqual([0.307692307692, 0.00769230769231]);
    const bitcoin = (whole.body as Entry[]).find((entry) => entry.source_name === 'reddit');
    expect(bitcoin?.label_weights['r/bitcoin']).toBe(0.315384615385);
  });

  // A reviewer's case: the owner's 0.15 and 0.7 × 2/3 are 0.616666666667, where the jobs'
  // weights rounded first (0.15 + 2 × 0.233333333333) added up to 0.616666666666.
  it('adds up a label of the legacy format from unrounded weights, rounded once', async () => {
    const dates = { post_start_datetime: '2026-11-01', post_end_datetime: '2026-11-02' };
    await submit({
      desirabilities: [
        { id: 'k2', weight: 1, params: { platform: 'x', label: '#bitcoin', keyword: 'etf' } },
        { id: 'k3', weight: 1, params: { platform: 'x', label: '#bitcoin', ...dates } },
        { id: 'k1', weight: 1, params: { platform: 'x', keyword: 'solana' } },
      ],
    }).expect(200);
    type Entry = { source_name: string; label_weights: Record<string, number> };
    const legacy = (await get('?format=legacy').expect(200)).body as Entry[];
    const x = legacy.find((entry) => entry.source_name === 'x');
    expect(x?.label_weights['#bitcoin']).toBe(0.616666666667);
  });

  it("refuses the ids '.' and '..', which no URL can hold as a path segment", async () => {
    const response = await submit({
      desirabilities: [job('.', 1, '#dot'), job('..', 1, '#dots'), job('...', 1, '#three')],
    }).expect(422);
    const refused = (index: number) => ({
      loc: [...ROOT, index, 'id'],
      msg: "Value error, id must not be '.' or '..'",
      type: 'value_error',
    });
    expect(response.body.detail).toEqual([refused(0), refused(1)]);
    expect(await registration('...')).toBeUndefined();
  });

  it('replaces the previous vote, and an empty list withdraws it', async () => {
    await submit({ desirabilities: [job('replace-first', 1, '#first')] }).expect(200);
    await submit({ desirabilities: [job('replace-second', 1, '#second')] }).expect(200);
    expect((await get(`?hotkey=${HOTKEY}`).expect(200)).body).toEqual([
      job('replace-second', 1, '#second'),
    ]);
    const ids = (await get().expect(200)).body.map((entry: JobEntry) => entry.id);
    expect(ids).toContain('replace-second');
    expect(ids).not.toContain('replace-first');
    // A task a vote no longer names runs on at weight 0, collected last.
    expect(await weightOf('replace-first')).toBe(0);
    expect(await weightOf('replace-second')).toBe(1);

    const withdrawn = await submit({ desirabilities: [] }).expect(200);
    expect(await weightOf('replace-second')).toBe(0);
    expect(withdrawn.body).toEqual({
      status: 'success',
      message: `Vote of ${HOTKEY} withdrawn; local only, not published to the network (GRAVITY_REPO_URL and SUBTENSOR_URL not set)`,
      tasks: [],
      publication: 'disabled',
    });
    const missing = await get(`?hotkey=${HOTKEY}`).expect(404);
    expect(missing.body).toMatchObject({
      detail: `No desirabilities submitted by hotkey ${HOTKEY}`,
    });
    expect((await get().expect(200)).body.map((entry: JobEntry) => entry.id).sort()).toEqual([
      'owner-btc',
      'owner-eth',
      'owner-subnet',
    ]);
  });

  it('answers 404 for a hotkey that never voted, and validates the query', async () => {
    expect((await get(`?hotkey=${NEVER_VOTED}`).expect(404)).body).toMatchObject({
      detail: `No desirabilities submitted by hotkey ${NEVER_VOTED}`,
    });
    // Text that names no key is the client's mistake, not a validator that never voted: a
    // checksum broken by one character, a made-up name, blanks (an API audit's finding).
    const broken = `${HOTKEY.slice(0, -1)}${HOTKEY.endsWith('a') ? 'b' : 'a'}`;
    for (const hotkey of [broken, '5Unknown', '%20%20']) {
      const refused = await get(`?hotkey=${hotkey}`).expect(422);
      expect(refused.body.detail).toEqual([
        expect.objectContaining({
          loc: ['query', 'hotkey'],
          type: 'value_error',
          msg: expect.stringMatching(/^Value error, must be a hotkey’s SS58 address/),
        }),
      ]);
    }
    const format = await get('?format=csv').expect(422);
    expect(format.body.detail).toEqual([
      expect.objectContaining({ loc: ['query', 'format'], type: 'enum' }),
    ]);
    const empty = await get('?hotkey=').expect(422);
    expect(empty.body.detail).toEqual([
      expect.objectContaining({ loc: ['query', 'hotkey'], type: 'string_too_short' }),
    ]);
  });

  // The original validates every query parameter, used or not; the document said `format`,
  // `limit` and `offset` were "Ignored with `hotkey`", which a 422 on them contradicted.
  it('checks format, limit and offset with a hotkey too, as the document says', async () => {
    for (const [query, loc, type] of [
      ['limit=0', 'limit', 'greater_than_equal'],
      ['offset=-1', 'offset', 'greater_than_equal'],
      ['format=csv', 'format', 'enum'],
    ] as const) {
      const refused = await get(`?hotkey=${NEVER_VOTED}&${query}`).expect(422);
      expect(refused.body.detail).toEqual([expect.objectContaining({ loc: ['query', loc], type })]);
    }
    // Valid, they change nothing of the submission.
    await get(`?hotkey=${NEVER_VOTED}&format=legacy&limit=1&offset=5`).expect(404);
    const document = (await app.http.get('/openapi.json').expect(200)).body;
    const parameters: { name: string; description: string }[] =
      document.paths['/api/v1/get_desirabilities'].get.parameters;
    for (const name of ['format', 'limit', 'offset'])
      expect(parameters.find((parameter) => parameter.name === name)!.description).toMatch(
        / Not used with `hotkey` \(still validated\)\.$/,
      );
  });

  it('keeps the registration of an active job submitted again', async () => {
    await submit({ desirabilities: [job('kept-registration', 1, '#kept')] }).expect(200);
    const first = await registration('kept-registration');
    app.app.get(Clock).advance(DAY);
    const again = await submit({
      desirabilities: [job('kept-registration', 2, '#kept'), job('kept-new', 1, '#new')],
    }).expect(200);
    expect(again.body.tasks).toEqual(['kept-registration', 'kept-new']);
    expect(again.body.message).toBe(
      `Vote of ${HOTKEY} saved: 2 jobs (1 newly registered task); local only, not published to the network (GRAVITY_REPO_URL and SUBTENSOR_URL not set)`,
    );
    expect(await registration('kept-registration')).toEqual(first);
  });

  // Such a task completed with an empty dataset, said nowhere (a simulated-month audit's finding).
  it('registers a job whose post window begins after the task’s life, and says its dataset will hold nothing', async () => {
    const start = new Date(app.app.get(Clock).now().getTime() + 8 * DAY).toISOString();
    const response = await submit({
      desirabilities: [job('window-after-life', 1, '#later', { post_start_datetime: start })],
    }).expect(200);
    expect(response.body.message).toBe(
      `Vote of ${HOTKEY} saved: 1 job (1 newly registered task); local only, not published to the network (GRAVITY_REPO_URL and SUBTENSOR_URL not set); ` +
        "the post window of task 'window-after-life' begins after its 7 days end: a task is collected only while it runs, so such a dataset holds no posts",
    );
  });

  it('rejects a job id registered for different params, at the job, and stores nothing', async () => {
    await submit({ desirabilities: [job('conflict-kept', 1, '#kept')] }).expect(200);
    await submit({
      desirabilities: [job('conflict-tao', 1, '#tao'), job(legacyJobId('x', '#ai'), 1, '#not-ai')],
    }).expect(200);

    const response = await submit({
      desirabilities: [
        job('conflict-fresh', 1, '#fresh'),
        job('conflict-tao', 1, '#other'),
        { source_name: 'x', label_weights: { '#AI': 1 } },
      ],
    }).expect(422);
    expect(response.body.detail).toEqual([
      {
        loc: [...ROOT, 1, 'id'],
        msg: "Value error, task id 'conflict-tao' is already registered for a different task",
        type: 'value_error',
      },
    ]);
    expect(await registration('conflict-fresh')).toBeUndefined();
    expect(await registration(legacyJobId('x', '#ai', 2))).toBeUndefined();
    expect((await get(`?hotkey=${HOTKEY}`).expect(200)).body).toEqual([
      job('conflict-tao', 1, '#tao'),
      job(legacyJobId('x', '#ai'), 1, '#not-ai'),
    ]);
    // The legacy label whose first id another task holds is no conflict: it takes its second.
    const legacy = await submit({
      desirabilities: [{ source_name: 'x', label_weights: { '#AI': 1 } }],
    });
    expect(legacy.body.tasks).toEqual([legacyJobId('x', '#ai', 2)]);
  });

  it('runs a legacy label again under its next generation once its task has ended', async () => {
    const legacy = { source_name: 'reddit', label_weights: { 'r/Renewed': 1 } };
    const generation = (n: number) => legacyJobId('reddit', 'r/renewed', n);
    const end = (id: string) =>
      database.query('UPDATE scraping_tasks SET expires_at = registered_at WHERE id = $1', [id]);
    const saved = (registered: number) =>
      `Vote of ${HOTKEY} saved: 1 job (${registered} newly registered task${registered === 1 ? '' : 's'}); local only, not published to the network (GRAVITY_REPO_URL and SUBTENSOR_URL not set)`;
    expect((await submit({ desirabilities: [legacy] }).expect(200)).body.tasks).toEqual([
      generation(1),
    ]);
    const first = await registration(generation(1));
    await end(generation(1));

    // Submitted again (a validator re-sending its standing vote): a new task, the ended one kept.
    const again = await submit({ desirabilities: [legacy] }).expect(200);
    expect(again.body).toMatchObject({ message: saved(1), tasks: [generation(2)] });
    expect((await registration(generation(2))).registered_by).toBe(HOTKEY);
    expect(await registration(generation(1))).toEqual({
      ...first,
      expires_at: first.registered_at,
    });
    const [vote] = await database.query<{ jobs: JobEntry[] }[]>(
      'SELECT jobs FROM desirability_votes WHERE hotkey = $1',
      [HOTKEY],
    );
    expect(vote.jobs).toEqual([job(generation(2), 1, 'r/renewed')]);
    // The new task carries the vote's weight: collection serves it first.
    expect(await weightOf(generation(2))).toBe(1);
    // While it runs, the label joins it.
    expect((await submit({ desirabilities: [legacy] }).expect(200)).body).toMatchObject({
      message: saved(0),
      tasks: [generation(2)],
    });
    await app.http
      .get(`/api/v1/tasks/${generation(2)}`)
      .set('X-API-Key', TEST_MASTER_KEY)
      .expect(200);

    // Ids a label never chose do not refuse it: an id given to another job of the submission,
    // or held by a task of other params (given by hand), is skipped.
    await submit({
      desirabilities: [job(generation(4), 1, 'r/renewed', { keyword: 'squatter' })],
    }).expect(200);
    await end(generation(2));
    const skipped = await submit({
      desirabilities: [job(generation(3), 1, 'r/elsewhere'), legacy],
    }).expect(200);
    expect(skipped.body.tasks).toEqual([generation(3), generation(5)]);
    expect((await registration(generation(5))).registered_by).toBe(HOTKEY);
  });

  // Each entry gets together what it gets alone: the label's id is the one it resolves to.
  it("holds a job's id against the id a legacy label resolves to, not its first one", async () => {
    const paired = { source_name: 'reddit', label_weights: { 'r/Paired': 1 } };
    const generation = (n: number) => legacyJobId('reddit', 'r/paired', n);
    const vote = async () =>
      (
        await database.query<{ jobs: JobEntry[] }[]>(
          'SELECT jobs FROM desirability_votes WHERE hotkey = $1',
          [HOTKEY],
        )
      )[0].jobs;

    // A job given the label's first id: the label skips it, in either order.
    const both = await submit({
      desirabilities: [paired, job(generation(1), 1, 'r/other-paired')],
    }).expect(200);
    expect(both.body.tasks).toEqual([generation(2), generation(1)]);
    const reversed = await submit({
      desirabilities: [job(generation(1), 1, 'r/other-paired'), paired],
    }).expect(200);
    expect(reversed.body.tasks).toEqual([generation(1), generation(2)]);

    // A job given the id of the running task the label joins is a real clash: refused at the
    // job, whichever comes first, and nothing stored.
    const stored = await vote();
    const clash = {
      loc: [...ROOT, 1, 'id'],
      msg:
        `Value error, id '${generation(2)}' is already used by another job of this submission: ` +
        "the reddit label 'r/paired' of a legacy entry runs under it (a label joins its task while it runs)",
      type: 'value_error',
    };
    const clashing = job(generation(2), 1, 'r/clashing');
    expect((await submit({ desirabilities: [paired, clashing] }).expect(422)).body.detail).toEqual([
      clash,
    ]);
    expect((await submit({ desirabilities: [clashing, paired] }).expect(422)).body.detail).toEqual([
      { ...clash, loc: [...ROOT, 0, 'id'] },
    ]);
    expect(await registration(generation(3))).toBeUndefined();
    expect(await vote()).toEqual(stored);

    // A job given the first id of a label whose task has ended: refused as alone, the label
    // running again under its next generation once the job is left out.
    const ended = { source_name: 'reddit', label_weights: { 'r/ended-paired': 1 } };
    const endedId = legacyJobId('reddit', 'r/ended-paired');
    await submit({ desirabilities: [ended] }).expect(200);
    await database.query('UPDATE scraping_tasks SET expires_at = registered_at WHERE id = $1', [
      endedId,
    ]);
    const naming = job(endedId, 1, 'r/ended-other');
    const alone = (await submit({ desirabilities: [naming] }).expect(422)).body.detail;
    expect(alone).toEqual([
      {
        loc: [...ROOT, 0, 'id'],
        msg: `Value error, task id '${endedId}' is already registered for a different task`,
        type: 'value_error',
      },
    ]);
    expect((await submit({ desirabilities: [ended, naming] }).expect(422)).body.detail).toEqual([
      { ...alone[0], loc: [...ROOT, 1, 'id'] },
    ]);
    expect((await submit({ desirabilities: [ended] }).expect(200)).body.tasks).toEqual([
      legacyJobId('reddit', 'r/ended-paired', 2),
    ]);

    // A clash and another job's own conflict: one 422 names both, in the submission's order.
    const before = await vote();
    expect(
      (await submit({ desirabilities: [naming, paired, clashing] }).expect(422)).body.detail,
    ).toEqual([alone[0], { ...clash, loc: [...ROOT, 2, 'id'] }]);
    expect(await vote()).toEqual(before);
  });
});

describe('The aggregate desirability list', () => {
  let network: TestNetwork;
  let directory: string;
  let databaseName: string;
  /** Two validators of the metagraph and one voter unknown to it, sharing one database. */
  let apps: { big: TestApp; small: TestApp; ghost: TestApp };
  let stakes: { big: number; small: number };

  beforeAll(async () => {
    network = await startTestNetwork(1);
    directory = mkdtempSync(join(tmpdir(), 'gateway-aggregate-'));
    databaseName = scratchDatabaseName('aggregate');
    const env = {
      ...network.env,
      DATABASE_URL: await createDatabase(process.env.TEST_RUN_SERVER_URL!, databaseName),
    };
    const [first, second] = network.devnet.validators;
    // The devnet's metagraph always has stakes.
    const [big, small] = first.stake! >= second.stake! ? [first, second] : [second, first];
    stakes = { big: big.stake!, small: small.stake! };
    // Each app signs as one of the devnet's validators (their keys derive from public URIs).
    const start = (uri: string) =>
      startTestApp(appEnvironment(directory, { ...env, VALIDATOR_HOTKEY_URI: uri }));
    apps = {
      big: await start(devnetKeyUri(network.devnet.corpus.seed, 'validator', big.uid)),
      small: await start(devnetKeyUri(network.devnet.corpus.seed, 'validator', small.uid)),
      ghost: await start('//GhostValidatorNotInTheMetagraph'),
    };
    expect(apps.big.config.validatorKeypair.address).toBe(big.hotkey);
  });
  afterAll(async () => {
    await Promise.all(Object.values(apps).map((app) => app.close()));
    await network.stop();
    await dropDatabase(process.env.TEST_RUN_SERVER_URL!, databaseName);
    rmSync(directory, { recursive: true, force: true });
  });

  const submit = (app: TestApp, desirabilities: unknown[]) =>
    app.http
      .post('/api/v1/set_desirabilities')
      .set('X-API-Key', TEST_MASTER_KEY)
      .send({ desirabilities });
  const fetchAggregate = (app: TestApp, format: 'jobs' | 'legacy') =>
    app.http
      .get(`/api/v1/get_desirabilities?format=${format}`)
      .set('X-API-Key', TEST_MASTER_KEY)
      .expect(200);
  const aggregate = async (app: TestApp) => (await fetchAggregate(app, 'jobs')).body as JobEntry[];
  const legacyAggregate = async (app: TestApp) =>
    (await fetchAggregate(app, 'legacy')).body as {
      source_name: string;
      label_weights: Record<string, number>;
    }[];

  /** Expected weights by id, rounded like the service (12 significant digits). */
  function expectWeights(actual: JobEntry[], expected: Record<string, number>) {
    expect(Object.fromEntries(actual.map((entry) => [entry.id, entry.weight]))).toEqual(
      Object.fromEntries(
        Object.entries(expected).map(([id, weight]) => [id, Number(weight.toPrecision(12))]),
      ),
    );
    const weights = actual.map((entry) => entry.weight);
    expect([...weights].sort((a, b) => b - a)).toEqual(weights);
  }

  const bittensor = legacyJobId('reddit', 'r/bittensor_');

  it('weights the owner 30 % and the votes 70 % by stake share, on every instance', async () => {
    const big = stakes.big / (stakes.big + stakes.small);
    const small = stakes.small / (stakes.big + stakes.small);
    await submit(apps.big, [job('agg-tao', 3, '#tao'), job('agg-btc', 1, '#bitcoin')]).expect(200);
    await submit(apps.small, [
      { source_name: 'reddit', label_weights: { 'r/bittensor_': 1 } },
      job('agg-tao', 1, '#tao'),
    ]).expect(200);
    await submit(apps.ghost, [job('agg-ghost', 1, '#ghost')]).expect(200);

    const expected = {
      // The owner's #bitcoin job and the big validator's agg-btc are the same job.
      'owner-btc': 0.3 * 0.5 + 0.7 * big * 0.25,
      'agg-tao': 0.7 * big * 0.75 + 0.7 * small * 0.5,
      [bittensor]: 0.7 * small * 0.5,
      'owner-eth': 0.3 * 0.25,
      'owner-subnet': 0.3 * 0.25,
    };
    for (const app of Object.values(apps)) expectWeights(await aggregate(app), expected);
    const merged = (await aggregate(apps.small)).find((entry) => entry.id === 'owner-btc');
    expect(merged?.params).toEqual({
      platform: 'x',
      label: '#bitcoin',
      keyword: null,
      post_start_datetime: null,
      post_end_datetime: null,
    });

    // Legacy: per platform, labels only; the keyword-only owner job cannot be expressed.
    const legacy = await legacyAggregate(apps.big);
    expect(legacy.map((entry) => entry.source_name).sort()).toEqual(['reddit', 'x']);
    const labels = Object.assign({}, ...legacy.map((entry) => entry.label_weights));
    expect(Object.keys(labels).sort()).toEqual(['#bitcoin', '#tao', 'r/bittensor_', 'r/ethereum']);
    expect(labels['#tao']).toBeCloseTo(expected['agg-tao'], 10);
  });

  // Offsets into a list that changed between two requests skip or repeat jobs: the version tells.
  it('names the aggregate by one version on every page, format and instance, another once a vote changes it', async () => {
    const version = async (app: TestApp, query: string) =>
      (
        await app.http
          .get(`/api/v1/get_desirabilities?${query}`)
          .set('X-API-Key', TEST_MASTER_KEY)
          .expect(200)
      ).headers['x-aggregate-version'];
    const vote = [job('agg-tao', 3, '#tao'), job('agg-btc', 1, '#bitcoin')];
    await submit(apps.big, vote).expect(200);
    const first = await version(apps.big, 'limit=2&offset=0');
    expect(first).toMatch(/^[0-9a-f]{16}$/);
    expect([
      await version(apps.big, 'limit=2&offset=2'),
      await version(apps.small, 'format=legacy&limit=1&offset=1'),
      await version(apps.ghost, ''),
    ]).toEqual([first, first, first]);

    // The big validator moves its weight from #tao to #bitcoin, then back.
    await submit(apps.big, [job('agg-tao', 1, '#tao'), job('agg-btc', 3, '#bitcoin')]).expect(200);
    const changed = await version(apps.small, 'limit=2&offset=2');
    expect(changed).toMatch(/^[0-9a-f]{16}$/);
    expect(changed).not.toBe(first);
    await submit(apps.big, vote).expect(200);
    expect(await version(apps.ghost, 'format=legacy')).toBe(first);
  });

  it('rejects a task id another validator registered for different params', async () => {
    const response = await submit(apps.ghost, [job('agg-tao', 1, '#not-tao')]).expect(422);
    expect(response.body.detail).toEqual([
      {
        loc: [...ROOT, 0, 'id'],
        msg: "Value error, task id 'agg-tao' is already registered for a different task",
        type: 'value_error',
      },
    ]);
  });

  it('stops weighing a job dropped from a vote, and every expired task', async () => {
    const small = stakes.small / (stakes.big + stakes.small);
    const big = stakes.big / (stakes.big + stakes.small);
    // agg-btc stays an active task, but is no longer in any vote.
    await submit(apps.big, [job('agg-tao', 1, '#tao')]).expect(200);
    expectWeights(await aggregate(apps.small), {
      'agg-tao': 0.7 * big + 0.7 * small * 0.5,
      'owner-btc': 0.3 * 0.5,
      [bittensor]: 0.7 * small * 0.5,
      'owner-eth': 0.3 * 0.25,
      'owner-subnet': 0.3 * 0.25,
    });

    apps.small.app.get(Clock).advance(8 * DAY);
    expectWeights(await aggregate(apps.small), {
      'owner-btc': 0.15,
      'owner-eth': 0.075,
      'owner-subnet': 0.075,
    });
    // The other instance's clock has not moved: for it, the tasks are still active.
    expect((await aggregate(apps.big)).map((entry: JobEntry) => entry.id)).toContain('agg-tao');
  });
});
