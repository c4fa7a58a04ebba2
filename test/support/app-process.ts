import { setTimeout as sleep } from 'node:timers/promises';
import { ChildProcess, execFileSync, spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmdirSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { Sr25519Keypair } from '../../src/network/bittensor/keypair';
import { forEachLine } from '../../src/common/text-lines';
import { createWalletHotkey } from '../../src/network/bittensor/wallet-file';
import { ApiContract } from './contract';
import { TEST_MASTER_KEY } from './test-app';
import { freeListeningPort } from '../../bench/support/ports';
import { GUARDED_NODE_ARGS, takeChildRefusal } from './loopback-guard';
import { RUN_BUILDS } from './abandoned-runs';

/** The seed of the validator key production test processes load from their wallet file. */
const PROCESS_KEY_SEED = createHash('sha256').update('validator-gateway process tests').digest();

/** The hotkey test processes sign with (devnets list it as a validator). */
export function processValidatorHotkey(): string {
  return Sr25519Keypair.fromSeed(PROCESS_KEY_SEED).address;
}

const ROOT = resolve(__dirname, '../..');
// Inside the project, so that the compiled code resolves the project's node_modules; the run's
// own (abandoned-runs.ts RUN_BUILDS), removed by its teardown.
const RUN_BUILD = join(RUN_BUILDS, process.env.TEST_RUN_DATABASE_NAME ?? 'outside-a-run');
const BUILD_DIR = join(RUN_BUILD, 'production');
const DEV_BUILD_DIR = join(RUN_BUILD, 'development');

/** The production entry point (dist/src/main.js), or the development one `npm start` runs. */
export type AppEntry = 'production' | 'development';

const ENTRIES: Record<AppEntry, { script: string; nodeEnv: string }> = {
  production: { script: join(BUILD_DIR, 'src', 'main.js'), nodeEnv: 'production' },
  development: {
    script: join(DEV_BUILD_DIR, 'src', 'devnet', 'start-with-devnet.js'),
    nodeEnv: 'development',
  },
};

/**
 * Compiles the service as `npm run build` does (into a cache directory, not dist/), so that
 * tests can run it as real processes, exactly the entry point a deployment runs. Once per test
 * run: spec files running at once in other workers would otherwise rewrite the files under
 * each other's processes.
 */
export function buildService(): void {
  // With its type check: `npm run check` checks tsconfig.json, whose types include jest's, so
  // only this build refuses a jest type used outside a spec (found by a review).
  onceThisRun(BUILD_DIR, () => compile('tsconfig.build.json', BUILD_DIR));
}

/**
 * A script of the production build (buildService) by its path under `dist/`
 * (`src/modules/erasure/erase-author-command.js`): what an operator's `npm run` command runs.
 */
export function builtScript(path: string): string {
  return join(BUILD_DIR, path);
}

/** Runs `build` unless it ran in this jest run already (the run's database names the run). */
function onceThisRun(outDir: string, build: () => void): void {
  const run = process.env.TEST_RUN_DATABASE_NAME;
  if (!run) return build();
  const marker = join(outDir, '.test-run');
  const lock = `${outDir}.lock`;
  const deadline = Date.now() + 180_000;
  mkdirSync(dirname(outDir), { recursive: true });
  // mkdir is atomic: one worker builds, the others wait for it and find the marker.
  for (;;) {
    try {
      mkdirSync(lock);
      break;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      if (Date.now() > deadline) throw new Error(`${lock} held for 3 minutes: remove it if stale`);
      Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 200);
    }
  }
  try {
    if (existsSync(marker) && readFileSync(marker, 'utf8') === run) return;
    build();
    writeFileSync(marker, run);
  } finally {
    rmdirSync(lock);
  }
}

/**
 * Compiles the development build as `npm run build:dev` does, for the development entry point,
 * once per test run; without its type check, which `npm run check` makes.
 */
export function buildDevelopmentEntry(): void {
  onceThisRun(DEV_BUILD_DIR, () => compile('tsconfig.dev.json', DEV_BUILD_DIR, '--noCheck'));
}

function compile(project: string, outDir: string, ...options: string[]): void {
  execFileSync(
    process.execPath,
    [require.resolve('typescript/bin/tsc'), '-p', project, '--outDir', outDir, ...options],
    { cwd: ROOT, stdio: 'pipe' },
  );
}

export interface AppProcess {
  readonly url: string;
  readonly pid: number;
  /** The OpenAPI document it serves, to check its answers (`checkedFetch`). */
  readonly contract: ApiContract;
  /** Every line the process wrote to stdout or stderr so far (JSON log lines in production). */
  readonly lines: string[];
  /** Resolves with the exit code (or the signal's name) when the process ends. */
  readonly exited: Promise<number | string>;
  /** Sends the signal and waits for the exit. */
  stop(signal?: NodeJS.Signals): Promise<number | string>;
}

export interface AppProcessOptions {
  /** Leads a process group of its own, as a shell's foreground job: signal it with -pid. */
  processGroup?: boolean;
  /** Given the process's pid once it is spawned: to signal it while it starts. */
  spawned?: (pid: number) => void;
}

/**
 * Starts `node dist/src/main.js` (the compiled service) in production mode on a free loopback
 * port and waits until it answers; or, with `entry` 'development', what `npm start` runs, in
 * development mode. `env` adds to (or overrides) a minimal setup: a btwallet hotkey file for
 * the validator key, miners allowed on loopback only.
 */
export async function startAppProcess(
  env: Record<string, string>,
  entry: AppEntry = 'production',
  options: AppProcessOptions = {},
): Promise<AppProcess> {
  const port = await freeListeningPort();
  const dataDir = mkdtempSync(join(tmpdir(), 'gateway-process-'));
  createWalletHotkey(join(dataDir, 'wallets', 'default', 'hotkeys', 'default'), {
    seed: PROCESS_KEY_SEED,
  });
  // The loopback guard runs in the process too: what it refuses fails the spec that started it.
  const child = spawn(process.execPath, [...GUARDED_NODE_ARGS, ENTRIES[entry].script], {
    cwd: ROOT,
    env: {
      PATH: process.env.PATH,
      NODE_ENV: ENTRIES[entry].nodeEnv,
      HOST: '127.0.0.1',
      PORT: String(port),
      MASTER_KEY: TEST_MASTER_KEY,
      BT_WALLET_PATH: join(dataDir, 'wallets'),
      VALIDATOR_HOTKEY: processValidatorHotkey(),
      MINER_ALLOWED_NETWORKS: 'loopback',
      DATA_DIR: dataDir,
      LOG_LEVEL: 'info',
      INDEX_SYNC_ON_START: 'false',
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: options.processGroup ?? false,
  });
  options.spawned?.(child.pid!);
  const lines: string[] = [];
  for (const stream of [child.stdout, child.stderr])
    forEachLine(stream, (line) => {
      takeChildRefusal(line, child.pid);
      lines.push(line);
    });
  const exited = new Promise<number | string>((done) =>
    child.once('exit', (code, signal) => {
      rmSync(dataDir, { recursive: true, force: true });
      done(code ?? signal ?? -1);
    }),
  );
  const url = `http://127.0.0.1:${port}`;
  const stop = async (signal: NodeJS.Signals = 'SIGTERM') => {
    if (child.exitCode === null && child.signalCode === null) child.kill(signal);
    return exited;
  };
  let contract: ApiContract;
  try {
    await waitUntilListening(url, child, lines);
    contract = await ApiContract.load(url);
  } catch (error) {
    // A service that stops on its own as it starts listening (a signal kept until then) may
    // answer the first request and not the next: its exit is the outcome, not the failed
    // request (a loaded CI run's "fetch failed").
    const exitedAlone = await Promise.race([
      exited.then(() => true),
      sleep(5_000, false, { ref: false }),
    ]);
    if (exitedAlone)
      throw new Error(
        `service exited with ${child.exitCode ?? child.signalCode}:\n${lines.join('\n')}`,
      );
    await stop('SIGKILL');
    throw error;
  }
  return { url, pid: child.pid!, contract, lines, exited, stop };
}

async function waitUntilListening(url: string, child: ChildProcess, lines: string[]) {
  const deadline = Date.now() + 30_000;
  while (Date.now() < deadline) {
    if (child.exitCode !== null || child.signalCode !== null)
      throw new Error(
        `service exited with ${child.exitCode ?? child.signalCode}:\n${lines.join('\n')}`,
      );
    try {
      // Another server on the port (it lost the port to one) answers, but not with this.
      const response = await fetch(`${url}/openapi.json`, { signal: AbortSignal.timeout(1000) });
      if (response.ok) return;
    } catch {
      // Not listening yet.
    }
    await new Promise((done) => setTimeout(done, 100));
  }
  throw new Error(`service did not answer within 30 s:\n${lines.join('\n')}`);
}

/**
 * Starts the service expecting it to exit with 1, as a start that fails for a known reason
 * does: the lines it wrote after `startAppProcess`'s first ("service exited with 1:").
 */
export async function failedStart(
  env: Record<string, string>,
  entry: AppEntry = 'production',
): Promise<string[]> {
  const error = await startAppProcess(env, entry).then(
    async (app) => {
      await app.stop('SIGKILL');
      throw new Error('the service started');
    },
    (failure: Error) => failure,
  );
  expect(error.message).toMatch(/^service exited with 1:/);
  return error.message.split('\n').slice(1);
}

/** The JSON log lines of a process, parsed; other lines are skipped. */
export function jsonLogs(app: AppProcess): Record<string, unknown>[] {
  return app.lines.flatMap((line) => {
    try {
      return [JSON.parse(line) as Record<string, unknown>];
    } catch {
      return [];
    }
  });
}
