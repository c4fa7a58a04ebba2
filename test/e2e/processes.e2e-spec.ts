import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { get } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from 'pg';
import fc from 'fast-check';
import { findLeaks } from '../../bench/support/fuzz/secret-forms';
import { runSecretsCampaign, SecretsResult } from '../../bench/support/fuzz/secrets';
import { raceRound, runRaceRound } from '../../bench/support/registration-race';
import {
  AppProcess,
  buildDevelopmentEntry,
  buildService,
  jsonLogs,
  processValidatorHotkey,
  startAppProcess,
} from '../support/app-process';
import { until } from '../support/until';
import { checkedFetch } from '../support/contract';
import { createDatabase, dropDatabase, scratchDatabaseName } from '../support/database';
import { startTestNetwork, TestNetwork } from '../support/network';
import { TEST_MASTER_KEY, testRedisPrefix, testRedisUrl } from '../support/test-app';

// The compiled service as real processes (what `npm run start:prod` and the Docker image run),
// sharing one Postgres and one Redis as replicas behind a load balancer do; and the development
// entry point `npm start` runs.

interface Answer {
  status: number;
  body: unknown;
  headers: Headers;
}

async function call(
  app: AppProcess,
  path: string,
  key: string,
  init: { method?: string; body?: unknown; headers?: Record<string, string> } = {},
): Promise<Answer> {
  const response = await checkedFetch(app.contract, `${app.url}${path}`, {
    method: init.method ?? 'GET',
    headers: { 'X-API-Key': key, 'Content-Type': 'application/json', ...init.headers },
    body: init.body === undefined ? undefined : JSON.stringify(init.body),
    signal: AbortSignal.timeout(20_000),
  });
  const text = await response.text();
  return {
    status: response.status,
    body: text ? JSON.parse(text) : null,
    headers: response.headers,
  };
}

async function createKey(
  app: AppProcess,
  name: string,
  tier = 'regular',
  settings: { rate_limit?: number } = {},
): Promise<string> {
  return (await createKeyWithId(app, name, tier, settings)).key;
}

async function createKeyWithId(
  app: AppProcess,
  name: string,
  tier = 'regular',
  settings: { rate_limit?: number } = {},
): Promise<{ key: string; id: string }> {
  const created = await call(app, '/api/v1/keys', TEST_MASTER_KEY, {
    method: 'POST',
    body: { name, tier, ...settings },
  });
  expect(created.status).toBe(200);
  return created.body as { key: string; id: string };
}

async function ownDatabase(label: string) {
  const serverUrl = process.env.TEST_RUN_SERVER_URL!;
  const name = scratchDatabaseName(label);
  const url = await createDatabase(serverUrl, name);
  const client = new Client({ connectionString: url });
  return {
    url,
    client,
    drop: async () => {
      await client.end().catch(() => undefined);
      await dropDatabase(serverUrl, name);
    },
  };
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)];
}

/** A GET on a connection of its own (never a pooled keep-alive one): rejects when refused. */
function newConnection(url: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const request = get(url, { agent: false }, (response) => {
      response.resume();
      resolve(response.statusCode ?? 0);
    });
    request.on('error', reject);
  });
}

beforeAll(() => buildService(), 120_000);

describe('Two service processes on one Postgres and one Redis', () => {
  let network: TestNetwork;
  let database: Awaited<ReturnType<typeof ownDatabase>>;
  let apps: AppProcess[] = [];

  beforeAll(async () => {
    network = await startTestNetwork(3, 7, [processValidatorHotkey()]);
    database = await ownDatabase('replicas');
    const env = {
      ...network.env,
      DATABASE_URL: database.url,
      REDIS_URL: testRedisUrl(),
      REDIS_KEY_PREFIX: testRedisPrefix(),
      INDEX_SYNC_ON_START: 'true',
      // The miners' whole limits (2 of each an hour), which the replicas race for.
      VALIDATOR_SHARES_HOTKEY: 'false',
      RATE_LIMIT_REGULAR: '20',
      // Far longer than the one second the key tests allow: only the announcement over Redis
      // can make the other replica see a change in time.
      KEY_CACHE_TTL_MS: '10000',
      // Every deactivated key's refusal is a failed authentication from 127.0.0.1, and the
      // replicas share their count: at the default 20, the master key would be locked out too.
      AUTH_FAILURE_LIMIT: '1000',
    };
    // Both start on an empty database at once: the migration lock lets one of them migrate.
    apps = await Promise.all([startAppProcess(env), startAppProcess(env)]);
    await database.client.connect();
  }, 120_000);

  afterAll(async () => {
    await Promise.all(apps.map((app) => app.stop()));
    await network?.stop();
    await database?.drop();
  }, 60_000);

  it('share one rate limit exactly: 20 of 40 concurrent requests spread over both pass', async () => {
    const key = await createKey(apps[0], 'shared-budget');
    const answers = await Promise.all(
      Array.from({ length: 40 }, (_, i) => call(apps[i % 2], '/api/v1/health', key)),
    );
    const statuses = answers.map((answer) => answer.status);
    expect(statuses.filter((status) => status === 200)).toHaveLength(20);
    expect(statuses.filter((status) => status === 429)).toHaveLength(20);
    const byApp = [0, 1].map((i) => statuses.filter((_, j) => j % 2 === i && _ === 200).length);
    expect(byApp[0] + byApp[1]).toBe(20);
    expect(answers[0].headers.get('x-ratelimit-limit')).toBe('20');
  });

  it("share a key's own limit exactly: 13 of 30 concurrent requests spread over both pass", async () => {
    const key = await createKey(apps[0], 'own-budget', 'regular', { rate_limit: 13 });
    const answers = await Promise.all(
      Array.from({ length: 30 }, (_, i) => call(apps[i % 2], '/api/v1/health', key)),
    );
    const statuses = answers.map((answer) => answer.status);
    expect(statuses.filter((status) => status === 200)).toHaveLength(13);
    expect(statuses.filter((status) => status === 429)).toHaveLength(17);
    for (const answer of answers) {
      expect(answer.headers.get('x-ratelimit-limit')).toBe('13');
      expect(answer.headers.get('ratelimit-policy')).toBe('"default";q=13;w=3600');
    }
    // Each admitted request saw its own place in the shared count: 12 down to 0, once each.
    const remaining = answers
      .filter((answer) => answer.status === 200)
      .map((answer) => Number(answer.headers.get('x-ratelimit-remaining')))
      .sort((a, b) => a - b);
    expect(remaining).toEqual(Array.from({ length: 13 }, (_, i) => i));
  });

  it("see a key's new limit on both within 3 s (the key cache's 10 s without the word), 5 times over", async () => {
    const delays: number[] = [];
    for (let round = 0; round < 5; round++) {
      const { key, id } = await createKeyWithId(apps[0], `to-change-${round}`, 'regular', {
        rate_limit: 100,
      });
      // Cached by both: only the announcement over Redis makes the other see the change
      // before KEY_CACHE_TTL_MS (10 s here).
      for (const app of apps) expect((await call(app, '/api/v1/health', key)).status).toBe(200);
      const [through, other] = round % 2 === 0 ? apps : [apps[1], apps[0]];
      const started = Date.now();
      const changed = await call(through, `/api/v1/keys/${id}`, TEST_MASTER_KEY, {
        method: 'PATCH',
        body: { rate_limit: 200 },
      });
      expect(changed.status).toBe(200);
      delays.push(
        await until(async () => {
          const answer = await call(other, '/api/v1/health', key);
          return answer.headers.get('x-ratelimit-limit') === '200'
            ? Date.now() - started
            : undefined;
        }, 5000),
      );
    }
    // The announcement, not the cache's end, made the other see it: without it the key stays
    // cached 10 s here. Bounds of 0.5 s and then 1 s measured the machine as much: a loaded one
    // took 515 ms, and at half a core 589 ms (an audit of timing in tests). Usually a few ms.
    expect(Math.max(...delays)).toBeLessThan(3000);
  });

  it('run the index sync once between them', async () => {
    await until(async () => {
      const { rows } = await database.client.query<{ status: string }>(
        `SELECT status FROM job_runs WHERE name = 'index-sync'`,
      );
      return rows[0]?.status === 'succeeded' ? true : undefined;
    }, 30_000);
    for (const miner of network.devnet.miners)
      expect(network.devnet.requestCounts(miner.uid).GetMinerIndex).toBe(1);
    const syncedBy = apps.filter((app) =>
      jsonLogs(app).some((line) => String(line.msg).startsWith('index sync: 3/3 miners')),
    );
    expect(syncedBy).toHaveLength(1);
  });

  it("share the miners' call budgets: no miner gets more than 2 bucket or index calls an hour", async () => {
    const labels = await call(apps[0], '/api/v1/get_top_labels_by_source/x', TEST_MASTER_KEY);
    const top = (labels.body as { label_value: string }[]).slice(0, 12);
    expect(top.length).toBeGreaterThan(5);
    // Both replicas at once, on many buckets: every answer races for the same budgets.
    const answers = await Promise.all(
      top.map(({ label_value: label }, i) =>
        call(
          apps[i % 2],
          `/api/v1/query_bucket/x?label=${encodeURIComponent(label)}`,
          TEST_MASTER_KEY,
        ),
      ),
    );
    expect(answers.every((answer) => answer.status === 200)).toBe(true);
    const bodies = answers.map((answer) => answer.body as { status: string; cached?: boolean });
    expect(bodies.some((body) => body.status === 'success' && body.cached === false)).toBe(true);

    const gateway = processValidatorHotkey();
    const perMiner = network.devnet.miners.map((miner) => {
      const calls = network.devnet.calls(miner.uid).filter((entry) => entry.caller === gateway);
      expect(calls.filter((entry) => entry.status !== 200)).toEqual([]);
      const count = (synapse: string) => calls.filter((entry) => entry.synapse === synapse).length;
      expect(count('GetMinerIndex')).toBeLessThanOrEqual(2);
      expect(count('GetDataEntityBucket')).toBeLessThanOrEqual(2);
      return count('GetDataEntityBucket');
    });
    // The budget, not a lack of requests, is what stopped the calls.
    expect(Math.max(...perMiner)).toBe(2);
  });

  it("see a deactivated key on both within 3 s (the key cache's 10 s without the word), 20 times over", async () => {
    // The worst case: the key was just looked up (and cached) by both; KEY_CACHE_TTL_MS is
    // 10 s here, so only the announcement over Redis can make the other one refuse in time.
    const delays: number[] = [];
    for (let round = 0; round < 20; round++) {
      const key = await createKey(apps[0], `to-deactivate-${round}`);
      for (const app of apps) expect((await call(app, '/api/v1/health', key)).status).toBe(200);
      const [through, other] = round % 2 === 0 ? apps : [apps[1], apps[0]];
      const started = Date.now();
      const done = await call(through, `/api/v1/keys/${key}/deactivate`, TEST_MASTER_KEY, {
        method: 'POST',
      });
      expect(done.status).toBe(200);
      delays.push(
        await until(async () => {
          const answer = await call(other, '/api/v1/health', key);
          return answer.status === 401 ? Date.now() - started : undefined;
        }, 5000),
      );
    }
    console.log(
      `deactivation seen by the other replica after (ms, 20 rounds): median ${median(delays)}, ` +
        `worst ${Math.max(...delays)}`,
    );
    // As for the new limit above: well within the cache's 10 s, with room for a loaded machine.
    expect(Math.max(...delays)).toBeLessThan(3000);
  }, 60_000);

  it('register tasks atomically under concurrent, conflicting submissions to both', async () => {
    // A sample of `npm run bench:registration` (hundreds of rounds).
    let round = 0;
    let totals = { submissions: 0, accepted: 0, refused: 0 };
    await fc.assert(
      fc.asyncProperty(
        fc.integer().chain(() => raceRound(round++)),
        async (race) => {
          const outcome = await runRaceRound(
            apps.map((app) => app.url),
            TEST_MASTER_KEY,
            processValidatorHotkey(),
            race,
            (url, init) => checkedFetch(apps[0].contract, url, init),
          );
          totals = {
            submissions: totals.submissions + outcome.submissions,
            accepted: totals.accepted + outcome.accepted,
            refused: totals.refused + outcome.refused,
          };
          expect(outcome.violations).toEqual([]);
        },
      ),
      { numRuns: Number(process.env.RACE_ROUNDS ?? 8), seed: 20261123, endOnFailure: true },
    );
    console.log(`registration race: ${round} rounds, ${JSON.stringify(totals)}, violations 0`);
    // The rounds did race: some submissions lost (422), some won.
    expect(totals.refused).toBeGreaterThan(0);
    expect(totals.accepted).toBeGreaterThan(0);
  }, 60_000);

  it('answer the same statistics and desirabilities whichever one is asked', async () => {
    const [labelsA, labelsB] = await Promise.all(
      apps.map((app) => call(app, '/api/v1/get_top_labels_by_source/x', TEST_MASTER_KEY)),
    );
    expect(labelsA.status).toBe(200);
    expect((labelsA.body as unknown[]).length).toBeGreaterThan(0);
    expect(labelsB.body).toEqual(labelsA.body);

    // Warm whatever B caches, change the vote through A, and read it back through B at once.
    await call(apps[1], '/api/v1/get_desirabilities', TEST_MASTER_KEY);
    const job = { id: 'replica-job', weight: 0.9, params: { platform: 'x', label: '#replicas' } };
    const submitted = await call(apps[0], '/api/v1/set_desirabilities', TEST_MASTER_KEY, {
      method: 'POST',
      body: { desirabilities: [job] },
    });
    expect(submitted.status).toBe(200);
    const aggregate = await call(apps[1], '/api/v1/get_desirabilities', TEST_MASTER_KEY);
    expect(aggregate.status).toBe(200);
    expect(JSON.stringify(aggregate.body)).toContain('replica-job');
  });

  it('log JSON lines carrying the request id, and never a key', async () => {
    const key = await createKey(apps[0], 'logged');
    await call(apps[0], '/api/v1/health', key, { headers: { 'X-Request-Id': 'replica-trace-42' } });
    await call(apps[0], `/api/v1/keys/${key}/deactivate`, TEST_MASTER_KEY, { method: 'POST' });
    // Until both requests' lines are out (a loaded machine may take longer than a fixed sleep).
    await until(async () => {
      const text = jsonLogs(apps[0]).map((line) => JSON.stringify(line));
      const out = ['replica-trace-42', '/deactivate'].every((what) =>
        text.some((line) => line.includes(what)),
      );
      return out || undefined;
    }, 10_000);
    const logs = jsonLogs(apps[0]);
    const traced = logs.filter((line) => JSON.stringify(line).includes('replica-trace-42'));
    expect(traced.length).toBeGreaterThan(0);
    expect(traced.every((line) => (line.req as { id?: string })?.id === 'replica-trace-42')).toBe(
      true,
    );
    const everything = apps.flatMap((app) => app.lines).join('\n');
    expect(everything).not.toContain(key);
    expect(everything).not.toContain(TEST_MASTER_KEY);
    // Both started on an empty database: the one that migrated says what it applied.
    const migrated = apps
      .flatMap((app) => jsonLogs(app))
      .filter((line) => String(line.msg).startsWith('migrations applied: '));
    expect(migrated).toEqual([
      expect.objectContaining({
        context: 'Database',
        msg: expect.stringContaining('InitialSchema'),
      }),
    ]);
  });
});

describe('A service process on SIGTERM', () => {
  let network: TestNetwork;
  let database: Awaited<ReturnType<typeof ownDatabase>>;

  beforeAll(async () => {
    // Every miner call takes 1.5 s: the signal is sent once a miner has the call, within that.
    network = await startTestNetwork(
      Array.from({ length: 3 }, () => ({ behaviour: { latencyMs: 1500 } })),
      7,
      [processValidatorHotkey()],
    );
    database = await ownDatabase('shutdown');
    await database.client.connect();
  }, 60_000);

  afterAll(async () => {
    await network?.stop();
    await database?.drop();
  }, 60_000);

  it('finishes the request in flight with Connection: close, refuses new connections and exits 0', async () => {
    const app = await startAppProcess({ ...network.env, DATABASE_URL: database.url });
    try {
      const inFlight = call(app, '/api/v1/on_demand_data_request', TEST_MASTER_KEY, {
        method: 'POST',
        body: { source: 'x', keywords: ['#bitcoin'], limit: 10 },
      });
      // The signal goes once a miner has the request's call, while it is still answering.
      await until(
        async () =>
          [0, 1, 2].some((uid) =>
            network.devnet.calls(uid).some((received) => received.synapse === 'OnDemandRequest'),
          ) || undefined,
        30_000,
        10,
      );
      const signalled = Date.now();
      process.kill(app.pid, 'SIGTERM');
      // Once the process has taken the signal (a loaded machine may take longer than a fixed
      // sleep), a new connection is refused.
      await until(
        () => Promise.resolve(app.lines.some((line) => line.includes('draining')) || undefined),
        5_000,
      );
      await expect(newConnection(`${app.url}/openapi.json`)).rejects.toThrow();

      const answer = await inFlight;
      expect(answer.status).toBe(200);
      expect((answer.body as { status: string }).status).toBe('success');
      // Not keep-alive: a client or proxy must not send its next request on this connection.
      expect(answer.headers.get('connection')).toBe('close');
      expect(await app.exited).toBe(0);
      expect(Date.now() - signalled).toBeLessThan(10_000);
      expect(app.lines.join('\n')).toContain('shutdown complete');
    } finally {
      await app.stop('SIGKILL');
    }
  });

  it('stops a running index sync and releases its lock and its job record', async () => {
    const app = await startAppProcess({
      ...network.env,
      DATABASE_URL: database.url,
      INDEX_SYNC_ON_START: 'true',
      INDEX_SYNC_CONCURRENCY: '1',
    });
    try {
      await until(async () => {
        const { rows } = await database.client.query<{ status: string }>(
          `SELECT status FROM job_runs WHERE name = 'index-sync'`,
        );
        return rows[0]?.status === 'running' ? true : undefined;
      }, 20_000);
      const signalled = Date.now();
      expect(await app.stop('SIGTERM')).toBe(0);
      expect(Date.now() - signalled).toBeLessThan(10_000);

      const { rows: locks } = await database.client.query(
        `SELECT 1 FROM pg_locks WHERE locktype = 'advisory' AND database =
           (SELECT oid FROM pg_database WHERE datname = current_database())`,
      );
      expect(locks).toHaveLength(0);
      // Interrupted, not succeeded: the replica that replaces this one syncs at start-up.
      const { rows } = await database.client.query<{ status: string; finished: boolean }>(
        `SELECT status, finished_at IS NOT NULL AS finished FROM job_runs WHERE name = 'index-sync'`,
      );
      expect(rows[0]).toEqual({ status: 'interrupted', finished: false });
    } finally {
      await app.stop('SIGKILL');
    }
  });
});

describe('A production process and its miners', () => {
  let database: Awaited<ReturnType<typeof ownDatabase>>;

  beforeAll(async () => {
    database = await ownDatabase('deployment');
  });
  afterAll(() => database?.drop());

  it('refuses to start without a metagraph source, naming both', async () => {
    await expect(startAppProcess({ DATABASE_URL: database.url })).rejects.toThrow(
      /service exited with 1:[\s\S]*SUBTENSOR_URL, METAGRAPH_FILE: one is required when NODE_ENV=production/,
    );
  });

  it('says network "devnet" in health and system-status when the miners are simulated', async () => {
    // As docker compose's devnet profile runs it: the devnet on its own, its metagraph file
    // read by a production gateway (which never starts a devnet itself).
    const network = await startTestNetwork(2, 7, [processValidatorHotkey()]);
    const app = await startAppProcess({ DATABASE_URL: database.url, ...network.env });
    try {
      const health = await call(app, '/api/v1/health', TEST_MASTER_KEY);
      expect(health.body).toMatchObject({ status: 'healthy', network: 'devnet' });
      const status = await call(app, '/api/v1/monitoring/system-status', TEST_MASTER_KEY);
      expect(status.body).toMatchObject({
        network: 'devnet',
        components: { chain: { status: 'disabled' }, miners: { available: 2 } },
      });
    } finally {
      expect(await app.stop()).toBe(0);
      await network.stop();
    }
  });

  it('gives its memory back once idle, and says so (IDLE_MEMORY_CHECK_SECONDS)', async () => {
    const network = await startTestNetwork(2, 7, [processValidatorHotkey()]);
    const app = await startAppProcess({
      DATABASE_URL: database.url,
      ...network.env,
      IDLE_MEMORY_CHECK_SECONDS: '1',
    });
    try {
      // Nothing is asked of it: the first quiet second after start-up collects.
      const line = await until(
        () => Promise.resolve(jsonLogs(app).find((entry) => entry.context === 'IdleMemory')),
        20_000,
      );
      expect(line.msg).toMatch(/^idle: collected garbage, RSS \d+ → \d+ MB \(\d+ ms\)$/);
    } finally {
      expect(await app.stop()).toBe(0);
      await network.stop();
    }
  });
});

describe('The development entry point (npm start)', () => {
  let database: Awaited<ReturnType<typeof ownDatabase>>;

  beforeAll(async () => {
    buildDevelopmentEntry();
    database = await ownDatabase('development');
  }, 120_000);
  afterAll(() => database?.drop());

  it('runs a devnet of 8 miners beside the service, whose first query returns data', async () => {
    const app = await startAppProcess({ DATABASE_URL: database.url }, 'development');
    try {
      const health = await call(app, '/api/v1/health', TEST_MASTER_KEY);
      expect(health.body).toMatchObject({ status: 'healthy', network: 'devnet' });
      const status = await call(app, '/api/v1/monitoring/system-status', TEST_MASTER_KEY);
      expect(status.body).toMatchObject({ components: { miners: { available: 8 } } });
      const query = await call(app, '/api/v1/on_demand_data_request', TEST_MASTER_KEY, {
        method: 'POST',
        body: { source: 'x', keywords: ['#bitcoin'] },
      });
      expect(query.status).toBe(200);
      expect((query.body as { data: unknown[] }).data.length).toBeGreaterThan(0);
      expect(app.lines.join('\n')).toContain('SIMULATED devnet of 8 miners');

      // No Gravity repository, no chain: a vote stays local, and the service says so.
      expect(app.lines.join('\n')).toContain(
        'Vote publication disabled: GRAVITY_REPO_URL and SUBTENSOR_URL not set; votes stay local to this gateway',
      );
      const validator = await createKey(app, 'voter', 'validator');
      const voted = await call(app, '/api/v1/set_desirabilities', validator, {
        method: 'POST',
        body: {
          desirabilities: [
            { id: 'local-tao', weight: 1, params: { platform: 'x', label: '#tao' } },
          ],
        },
      });
      expect(voted.status).toBe(200);
      expect(voted.body).toMatchObject({ publication: 'disabled' });
      expect((voted.body as { message: string }).message).toContain('local only, not published');
      const publication = await call(app, '/api/v1/desirabilities/publication', validator);
      expect(publication.body).toMatchObject({ state: 'disabled' });
    } finally {
      expect(await app.stop()).toBe(0);
    }
  });

  // No validator calls the devnet's miners: left the calls of one that is not there, the
  // gateway had one bucket call a miner an hour, the first index sync's spot checks took 5 of
  // the 8 and their share kept the rest, and query_bucket answered an error for the hour.
  it("answers query_bucket right after the first index sync, with the devnet's whole call limits", async () => {
    const fresh = await ownDatabase('first-start');
    const app = await startAppProcess(
      { DATABASE_URL: fresh.url, INDEX_SYNC_ON_START: 'true' },
      'development',
    );
    try {
      const finished = await until(
        () => Promise.resolve(app.lines.find((line) => line.includes('index sync finished'))),
        60_000,
      );
      expect(finished).toContain('; 5 spot checks (');
      const labels = await call(app, '/api/v1/get_top_labels_by_source/x', TEST_MASTER_KEY);
      const top = (labels.body as { label_value: string }[]).slice(0, 3).map((l) => l.label_value);
      // The README's example first, then labels that spot checks are unlikely to have fetched.
      for (const label of ['#bitcoin', ...top]) {
        const answer = await call(
          app,
          `/api/v1/query_bucket/x?label=${encodeURIComponent(label)}`,
          TEST_MASTER_KEY,
        );
        expect({ label, body: answer.body }).toMatchObject({ label, body: { status: 'success' } });
      }
    } finally {
      expect(await app.stop()).toBe(0);
      await fresh.drop();
    }
  }, 120_000);
});

describe('A production process and the secrets planted in its requests', () => {
  // A sample of `npm run bench:secrets` (10,000 cases): set SECRETS_FUZZ_RUNS to vary it.
  const runs = Number(process.env.SECRETS_FUZZ_RUNS ?? 300);
  let database: Awaited<ReturnType<typeof ownDatabase>>;
  let directory: string;
  let metagraph: string;

  beforeAll(async () => {
    database = await ownDatabase('secrets');
    directory = mkdtempSync(join(tmpdir(), 'secrets-'));
    metagraph = join(directory, 'metagraph.json');
    writeFileSync(metagraph, JSON.stringify({ netuid: 13, block: 0, neurons: [] }));
  });
  afterAll(async () => {
    await database?.drop();
    rmSync(directory, { recursive: true, force: true });
  });

  it(`never writes or answers a secret, in any encoding, over ${runs} planted requests`, async () => {
    const metricsToken = `metrics-${randomBytes(16).toString('hex')}`;
    const app = await startAppProcess({
      DATABASE_URL: database.url,
      METAGRAPH_FILE: metagraph,
      METRICS_TOKEN: metricsToken,
      LOG_LEVEL: 'debug',
    });
    let result: SecretsResult;
    const secrets = { master: TEST_MASTER_KEY, issued: '', metricsToken };
    try {
      secrets.issued = await createKey(app, 'planted', 'validator');
      result = await runSecretsCampaign(app.url, secrets, { numRuns: runs, seed: 20261123 });
    } finally {
      expect(await app.stop()).toBe(0);
    }
    expect(result.requests).toBe(runs);
    // Every position was tried, and requests got through to the routes, not only to 400s.
    expect(result.byPosition.size).toBe(9);
    console.log(
      `secrets fuzz: ${result.requests} requests, ${result.planted} secrets planted, statuses ` +
        JSON.stringify(Object.fromEntries(result.statuses)),
    );
    expect(result.statuses.get(200) ?? 0).toBeGreaterThan(0);
    const leaks = findLeaks(secrets, [
      { where: 'the process output', text: app.lines.join('\n') },
      ...result.bodies,
    ]);
    expect(leaks).toEqual([]);
    // Every answer, planted secret and all, is one the OpenAPI document describes.
    expect(result.offDocument).toEqual([]);
    // The scan had something to scan: a line per request (the body parser's refusals aside).
    expect(app.lines.length).toBeGreaterThan(runs * 0.8);
  }, 120_000);
});
