import { execFile } from 'node:child_process';
import {
  copyFileSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import type { Middleware } from 'openapi-fetch';
import type { OpenAPI3 } from 'openapi-typescript';
import { Clock } from '../../src/common/clock/clock';
import { IndexSyncService } from '../../src/network/index-sync/index-sync.service';
import { NetworkService } from '../../src/network/network.service';
import { TaskLifecycleService } from '../../src/modules/tasks/task-lifecycle.service';
import { checkFetchResponse } from '../support/contract';
import { startTestNetwork, TestNetwork } from '../support/network';
import { startTestApp, TEST_MASTER_KEY, TestApp } from '../support/test-app';
import { registerTask } from '../support/tasks';

const ROOT = resolve(__dirname, '../..');
const CONSUMER = join(ROOT, 'test', 'generated-client', 'consumer.ts');
const GENERATOR = join(ROOT, 'node_modules', 'openapi-typescript', 'bin', 'cli.js');
const TSC = join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc');
const run = promisify(execFile);
// Inside the project, so that the consumer resolves openapi-fetch from its node_modules.
const CACHE = join(ROOT, 'node_modules', '.cache');
const DAY = 24 * 3600 * 1000;
const HTTP_METHODS = ['get', 'put', 'post', 'delete', 'patch', 'options', 'head', 'trace'];

/** What the test uses of test/generated-client/consumer.ts (compiled at test time). */
interface Consumer {
  tour(
    baseUrl: string,
    masterKey: string,
    completedTaskId: string,
    middleware: Middleware[],
  ): Promise<Record<string, unknown>>;
}

/**
 * Type-checks `directory`'s consumer.ts (and what it imports) with tsc, as a consumer's strict
 * project would, and emits it beside itself. Returns tsc's diagnostics; none means it compiled.
 * A child process: a synchronous compile would stall the app this process serves for seconds.
 */
async function compile(directory: string): Promise<string[]> {
  const config = {
    compilerOptions: {
      strict: true,
      target: 'ES2022',
      module: 'node16',
      moduleResolution: 'node16',
      lib: ['ES2022', 'DOM'],
      types: [],
      skipLibCheck: true,
      noEmitOnError: true,
    },
    files: ['consumer.ts'],
  };
  writeFileSync(join(directory, 'tsconfig.json'), JSON.stringify(config));
  return tsc(directory, ['-p', directory]);
}

/** tsc's diagnostics for `args` run in `directory`; none means it compiled. */
async function tsc(directory: string, args: string[]): Promise<string[]> {
  try {
    await run(process.execPath, [TSC, ...args, '--pretty', 'false'], { cwd: directory });
    return [];
  } catch (error) {
    const { stdout } = error as { stdout?: string };
    if (!stdout) throw error;
    return stdout.trim().split('\n');
  }
}

/** The commands and the snippet of the README's "Generated clients", in its order. */
function readmeExample(): { setup: string[]; snippet: string; run: string } {
  const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
  const section = /^## Generated clients\n([\s\S]*?)^## /m.exec(readme)?.[1] ?? '';
  const blocks = (language: string) =>
    [...section.matchAll(new RegExp(`^\`\`\`${language}\n([\\s\\S]*?)^\`\`\``, 'gm'))].map(
      (match) => match[1],
    );
  const [setup, run] = blocks('bash');
  return {
    setup: (setup ?? '').trim().split('\n'),
    snippet: blocks('ts')[0] ?? '',
    run: run ?? '',
  };
}

describe('a client generated from the served OpenAPI document', () => {
  let network: TestNetwork;
  let dataDir: string;
  let app: TestApp;
  let directory: string;

  beforeAll(async () => {
    network = await startTestNetwork(3);
    dataDir = mkdtempSync(join(tmpdir(), 'gateway-client-'));
    app = await startTestApp(
      { ...network.env, DATA_DIR: dataDir, QUERY_MINERS: '3', QUERY_CACHE_TTL_SECONDS: '0' },
      { ownDatabase: true },
    );
    mkdirSync(CACHE, { recursive: true });
    directory = mkdtempSync(join(CACHE, 'generated-client-'));
    // Statistics and a completed task's dataset, for the client to read.
    await app.app.get(IndexSyncService).runIfDue();
    await app.app.get(NetworkService).settled();
    await registerTask(app.app, '5ValidatorHotkeyForTasks', 'client-bitcoin', '#bitcoin');
    const lifecycle = app.app.get(TaskLifecycleService);
    await lifecycle.runOnce();
    app.app.get(Clock).advance(8 * DAY);
    await lifecycle.runOnce();
  });
  afterAll(async () => {
    await app?.close();
    await network?.stop();
    rmSync(dataDir, { recursive: true, force: true });
    if (directory) rmSync(directory, { recursive: true, force: true });
  });

  it('compiles against openapi-typescript types and calls every operation through openapi-fetch', async () => {
    const document = (await (await fetch(`${app.url}/openapi.json`)).json()) as OpenAPI3;
    // The CLI, as a consumer runs it (its ESM dependencies do not load inside jest anyway).
    await run(
      process.execPath,
      [GENERATOR, `${app.url}/openapi.json`, '--output', join(directory, 'api.d.ts')],
      { cwd: ROOT, timeout: 30_000 },
    );
    copyFileSync(CONSUMER, join(directory, 'consumer.ts'));
    expect(await compile(directory)).toEqual([]);

    const called = new Set<string>();
    const record: Middleware = {
      onRequest: ({ request, schemaPath }) => void called.add(`${request.method} ${schemaPath}`),
      // Every answer the client gets is checked against the document too.
      onResponse: ({ request, response }) => checkFetchResponse(app.contract, request, response),
    };
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const consumer = require(join(directory, 'consumer.js')) as Consumer;
    const tour = await consumer.tour(app.url, TEST_MASTER_KEY, 'client-bitcoin', [record]);

    const operations = Object.entries(document.paths ?? {}).flatMap(([path, item]) =>
      Object.keys(item)
        .filter((key) => HTTP_METHODS.includes(key))
        .map((method) => `${method.toUpperCase()} ${path}`),
    );
    expect([...called].sort()).toEqual(operations.sort());
    expect(tour).toMatchObject({
      createdKey: expect.stringMatching(/^sk_live_/),
      health: 'healthy',
      miners: 3,
      keyLimit: 500,
      keyUsage: { limit: 500, used: expect.any(Number), rate_limited: false },
      tasksRegistered: ['team-bitcoin'],
      publication: 'disabled',
      aggregateSource: 'local',
      deactivated: 'success',
      recompileRefused: JSON.stringify(
        "Task 'client-bitcoin' is completed; only a failed task can be recompiled",
      ),
    });
    // The discriminated item types: X items show their hashtags, Reddit items their community.
    expect((tour.xItems as string[])[0]).toMatch(/ X \S+ .*#/);
    expect((tour.redditItems as string[])[0]).toMatch(/ REDDIT \S+ r\//);
    for (const field of ['xItems', 'redditItems'])
      expect((tour[field] as string[]).length).toBeGreaterThan(0);
    for (const field of ['keysListed', 'desirabilities', 'topLabels', 'bitcoinBytes', 'tasks'])
      expect(tour[field]).toBeGreaterThan(0);
    // The key's own requests, counted and shown: none of the admin's.
    const usage = tour.keyUsage as { used: number; remaining: number };
    expect(usage.used).toBeGreaterThan(3);
    expect(usage.remaining).toBe(500 - usage.used);
    expect(tour.datasetBytes).toBeGreaterThan(20);
    expect(tour.parquetBytes).toBeGreaterThan(20);
    expect(tour.metricsLines).toBeGreaterThan(10);
  });

  // A reader pastes these as they stand: the snippet imported './api' (refused by nodenext
  // resolution), used `process` (no types for it unless @types/node is named, TypeScript 6 on)
  // and top-level await (refused in the CommonJS package `npm init` makes), and the README said
  // neither how to compile it nor how to run it.
  it("the README's example compiles and runs as written, with the packages it installs", async () => {
    const { setup, snippet, run: command } = readmeExample();
    expect(setup.join('\n')).toContain('npm pkg set type=module');
    const installed = setup.flatMap((line) =>
      [...line.matchAll(/npm install (?:-D )?([^&]+)/g)].flatMap((match) =>
        match[1].trim().split(/\s+/),
      ),
    );
    const manifest = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as {
      dependencies: Record<string, string>;
      devDependencies: Record<string, string>;
    };
    // This project's copies stand in for the reader's installs.
    for (const name of installed)
      expect({
        name,
        ours: name in { ...manifest.dependencies, ...manifest.devDependencies },
      }).toEqual({
        name,
        ours: true,
      });
    expect(installed).toEqual(
      expect.arrayContaining(['openapi-fetch', 'openapi-typescript', 'typescript', '@types/node']),
    );

    // A folder of its own, as the README's `mkdir` makes: inside the project, tsc would find the
    // project's tsconfig.json above it and refuse the files named on its command line.
    const example = mkdtempSync(join(tmpdir(), 'readme-client-'));
    const modules = join(example, 'node_modules');
    try {
      symlinkSync(join(ROOT, 'node_modules'), modules, 'dir');
      writeFileSync(join(example, 'package.json'), JSON.stringify({ type: 'module' }));
      const generate = setup.find((line) => line.startsWith('npx openapi-typescript '));
      const [, output] = / -o (\S+)$/.exec(generate ?? '') ?? [];
      expect(output).toBe('api.d.ts');
      await run(
        process.execPath,
        [GENERATOR, `${app.url}/openapi.json`, '--output', join(example, output)],
        { cwd: ROOT, timeout: 30_000 },
      );
      expect(snippet).toContain("baseUrl: 'http://localhost:3000'");
      writeFileSync(join(example, 'client.ts'), snippet.replace('http://localhost:3000', app.url));

      const [, flags] =
        /^npx tsc (.+) client\.ts && GATEWAY_KEY=\$KEY node client\.js$/m.exec(command) ?? [];
      expect(flags).toBeDefined();
      expect(await tsc(example, [...flags.split(' '), 'client.ts'])).toEqual([]);
      const { stdout } = await run(process.execPath, ['client.js'], {
        cwd: example,
        env: { ...process.env, GATEWAY_KEY: TEST_MASTER_KEY },
        timeout: 30_000,
      });
      const lines = stdout.trim().split('\n');
      expect(lines.length).toBeGreaterThan(0);
      for (const line of lines)
        // An item's date as the hosted API writes it (`+00:00`), then its uri.
        expect(line).toMatch(/^\d{4}-\d\d-\d\dT\S+\+00:00 https:\/\/x\.com\/\S+$/);
    } finally {
      rmSync(modules, { force: true });
      rmSync(example, { recursive: true, force: true });
    }
  });
});
