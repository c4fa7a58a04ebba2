import { setTimeout as sleep } from 'node:timers/promises';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { writeSampleRepoNames } from '../../src/devnet/repo-names-file';
import { ReposRepository } from '../../src/modules/repos/repos.repository';
import { createDatabase, dropDatabase, scratchDatabaseName } from '../support/database';
import { createKey } from '../support/fixtures';
import { startTestApp, TEST_MASTER_KEY, TestApp } from '../support/test-app';
import { startThrowawayPostgres, ThrowawayPostgres } from '../support/throwaway-servers';
import { until } from '../support/until';

/**
 * SAMPLE_REPO_NAMES sorted by code point (upper case first, `-` before `_`), unique, listed only.
 */
const SAMPLE_LIST = [
  'Devnet-Miner-7/x_dataset_7',
  'devnet-miner-1/reddit_dataset_1',
  'devnet-miner-2/x_dataset_2',
  'devnet-miner-3/x_dataset_3',
  'devnet_miner_5/reddit_dataset_5',
];

function listRepoNames(app: TestApp, key = TEST_MASTER_KEY) {
  return app.http.get('/api/v1/list_repo_names').set('X-API-Key', key);
}

/** The details the document gives as examples of list_repo_names' 503. */
async function documented503Details(app: TestApp): Promise<unknown[]> {
  const document = (await app.http.get('/openapi.json').expect(200)).body as {
    paths: Record<
      string,
      {
        get: {
          responses: Record<string, { content: { 'application/json': { examples: object } } }>;
        };
      }
    >;
  };
  const { examples } =
    document.paths['/api/v1/list_repo_names'].get.responses['503'].content['application/json'];
  return Object.values(examples as Record<string, { value: { detail: unknown } }>).map(
    (example) => example.value.detail,
  );
}

/**
 * Polls until the endpoint answers `expected` (status and body) or `timeoutMs` passes: the file
 * is polled each second and then read, which 3 s left little room for on a loaded machine.
 */
async function eventually(
  app: TestApp,
  expected: { status: number; body: unknown },
  timeoutMs = 10_000,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const response = await listRepoNames(app);
    try {
      expect({ status: response.status, body: response.body as unknown }).toEqual(expected);
      return;
    } catch (error) {
      if (Date.now() > deadline) throw error;
    }
    await sleep(100);
  }
}

describe('GET /api/v1/list_repo_names', () => {
  let directory: string;

  beforeAll(async () => {
    directory = await mkdtemp(join(tmpdir(), 'repo-names-e2e-'));
  });
  afterAll(() => rm(directory, { recursive: true, force: true }));

  describe('without HF_RESULTS_PATH', () => {
    let app: TestApp;
    beforeAll(async () => {
      app = await startTestApp();
    });
    afterAll(() => app.close());

    it('answers an empty list to a regular key', async () => {
      const { key } = await createKey(app, { tier: 'regular' });
      const response = await listRepoNames(app, key).expect(200);
      expect(response.body).toEqual({ count: 0, repo_names: [] });
    });

    it('answers 401 without a key', async () => {
      const response = await app.http.get('/api/v1/list_repo_names').expect(401);
      expect(response.body).toMatchObject({ detail: 'Missing API key' });
    });
  });

  // The later tests here rewrite the sample file: a test that reads the sample list goes first.
  describe('with a Parquet file', () => {
    let app: TestApp;
    let path: string;
    beforeAll(async () => {
      path = join(directory, 'hf_validation.parquet');
      await writeSampleRepoNames(path);
      app = await startTestApp({ HF_RESULTS_PATH: path }, { ownDatabase: true });
    });
    afterAll(() => app.close());

    it('lists the names sorted and unique, without no_dataset_provided or empty values, to a regular key', async () => {
      const { key } = await createKey(app, { tier: 'regular' });
      const response = await listRepoNames(app, key).expect(200);
      expect(response.body).toEqual({ count: SAMPLE_LIST.length, repo_names: SAMPLE_LIST });
    });

    it('serves the new list within seconds of the file being replaced', async () => {
      await writeSampleRepoNames(path, 'parquet', [
        'zed/new',
        'no_dataset_provided',
        'amy/new',
        'zed/new',
      ]);
      await eventually(app, {
        status: 200,
        body: { count: 2, repo_names: ['amy/new', 'zed/new'] },
      });
    });

    it('lists names without surrounding white space, each once', async () => {
      await writeSampleRepoNames(path, 'parquet', [
        ' ann/padded ',
        'ann/padded',
        ' no_dataset_provided ',
        '   ',
        '\tzoe/padded\n',
      ]);
      await eventually(app, {
        status: 200,
        body: { count: 2, repo_names: ['ann/padded', 'zoe/padded'] },
      });
    });

    it('keeps serving the last good list when the file is deleted', async () => {
      await writeSampleRepoNames(path, 'parquet', ['kept/one', 'kept/two']);
      await eventually(app, {
        status: 200,
        body: { count: 2, repo_names: ['kept/one', 'kept/two'] },
      });
      await rm(path);
      await sleep(2500); // the deletion is seen and its failed ingest is over
      const response = await listRepoNames(app).expect(200);
      expect(response.body).toEqual({ count: 2, repo_names: ['kept/one', 'kept/two'] });
    });
  });

  it.each(['csv', 'jsonl'] as const)('lists the same names from a %s file', async (format) => {
    const path = join(directory, `hf_validation.${format}`);
    await writeSampleRepoNames(path);
    const app = await startTestApp({ HF_RESULTS_PATH: path }, { ownDatabase: true });
    try {
      const response = await listRepoNames(app).expect(200);
      expect(response.body).toEqual({ count: SAMPLE_LIST.length, repo_names: SAMPLE_LIST });
    } finally {
      await app.close();
    }
  });

  describe('with a configured file that does not exist', () => {
    let app: TestApp;
    let path: string;
    beforeAll(async () => {
      path = join(directory, 'late.csv');
      app = await startTestApp({ HF_RESULTS_PATH: path }, { ownDatabase: true });
    });
    afterAll(() => app.close());

    it('answers 503 with a detail until the file appears, then the list', async () => {
      const response = await listRepoNames(app).expect(503);
      expect(response.body).toMatchObject({
        detail: 'Repository names are unavailable: the validation data file does not exist',
      });
      // The document showed only "not loaded yet" (and the database's): a client matching the
      // documented details met this one undocumented.
      expect(await documented503Details(app)).toContain(response.body.detail);
      await writeSampleRepoNames(path);
      await eventually(app, {
        status: 200,
        body: { count: SAMPLE_LIST.length, repo_names: SAMPLE_LIST },
      });
    });
  });

  // The file is watched, not the database: a change the ingest could not store was never
  // applied until the file changed again.
  describe('with Postgres down when the file changes', () => {
    let postgres: ThrowawayPostgres;
    let app: TestApp;
    let path: string;
    beforeAll(async () => {
      path = join(directory, 'outage.jsonl');
      await writeSampleRepoNames(path);
      postgres = await startThrowawayPostgres();
      app = await startTestApp({ HF_RESULTS_PATH: path, DATABASE_URL: postgres.url });
    }, 120_000);
    afterAll(async () => {
      await app?.close();
      await postgres?.destroy();
    }, 60_000);

    it('applies the change once Postgres is back, without another change', async () => {
      await eventually(app, {
        status: 200,
        body: { count: SAMPLE_LIST.length, repo_names: SAMPLE_LIST },
      });
      const replaceNames = jest.spyOn(app.app.get(ReposRepository), 'replaceNames');
      try {
        await postgres.stop();
        await writeFile(path, `${JSON.stringify({ repo_name: 'after/the-outage' })}\n`);
        // The watcher's ingest, refused (the call, not its outcome: `until` would await that).
        const ingest = await until(
          () => Promise.resolve(replaceNames.mock.results[0] as { value: Promise<number> }),
          10_000,
        );
        await expect(ingest.value).rejects.toThrow('ECONNREFUSED');
        await postgres.start();
        // Tried again 5 s after the refusal (10 s more if Postgres was still starting).
        await eventually(
          app,
          { status: 200, body: { count: 1, repo_names: ['after/the-outage'] } },
          30_000,
        );
      } finally {
        replaceNames.mockRestore();
      }
    }, 60_000);
  });

  describe('across restarts', () => {
    const serverUrl = () => process.env.TEST_RUN_SERVER_URL!;
    const database = scratchDatabaseName('repos');
    let databaseUrl: string;
    beforeAll(async () => {
      databaseUrl = await createDatabase(serverUrl(), database);
    });
    afterAll(() => dropDatabase(serverUrl(), database));

    it('serves the last good list of the same file after a restart without it, but not for another file', async () => {
      const path = join(directory, 'restart.jsonl');
      await writeSampleRepoNames(path);
      const first = await startTestApp({ HF_RESULTS_PATH: path, DATABASE_URL: databaseUrl });
      try {
        await listRepoNames(first).expect(200);
      } finally {
        await first.close();
      }
      await rm(path);

      const second = await startTestApp({ HF_RESULTS_PATH: path, DATABASE_URL: databaseUrl });
      try {
        const response = await listRepoNames(second).expect(200);
        expect(response.body).toEqual({ count: SAMPLE_LIST.length, repo_names: SAMPLE_LIST });
      } finally {
        await second.close();
      }

      const third = await startTestApp({
        HF_RESULTS_PATH: join(directory, 'other.jsonl'),
        DATABASE_URL: databaseUrl,
      });
      try {
        await listRepoNames(third).expect(503);
      } finally {
        await third.close();
      }
    });
  });
});
