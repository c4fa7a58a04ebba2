import { createHash, randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createApp } from '../../src/bootstrap';
import { loadConfig } from '../../src/config/load-config';
import { Sr25519Keypair } from '../../src/network/bittensor/keypair';
import { loadValidatorKey } from '../../src/network/bittensor/validator-key';
import { createWalletHotkey } from '../../src/network/bittensor/wallet-file';
import type { ApiKeyCreatedDto } from '../../src/modules/api-keys/dto/api-key-created.dto';
import type { ApiKeyTier } from '../../src/common/auth/api-key-tier';
import { announcePort } from './child-server';
import { RATE_LIMIT_MAX } from '../../src/common/throttling/rate-limit-settings';

/**
 * Environment every app benchmark runs with, on top of the caller's environment (so tuning
 * variables such as DATABASE_POOL_SIZE or REDIS_URL still apply). Printed in the reports.
 */
export const BENCH_APP_SETTINGS = {
  // Production mode as deployed: the validator key comes from a wallet file (benchAppEnv).
  NODE_ENV: 'production',
  // The benchmarks' miners are devnet axons on loopback; production allows public addresses only.
  MINER_ALLOWED_NETWORKS: 'loopback',
  // Per-request logs would measure the logger (and flood the terminal), not the service.
  LOG_LEVEL: 'warn',
  // The real budget (1000/hour) would turn the benchmark into a stream of 429s within a second;
  // the most a budget may be is far more than any run sends in the one-second window.
  RATE_LIMIT_VALIDATOR: String(RATE_LIMIT_MAX),
  // The in-memory throttler keeps one timestamp per request in the window; a one-second window
  // keeps that list near the size a real 1000/hour key reaches, instead of growing all run long.
  RATE_LIMIT_WINDOW_SECONDS: '1',
  HOST: '127.0.0.1',
  PORT: '0',
} as const;

/** The seed of the benchmarks' validator key: a public test value, like `//Alice`. */
const BENCH_KEY_SEED = createHash('sha256').update('validator-gateway benchmarks').digest();

/** The key the benchmarked service signs with; devnets list its hotkey as a validator. */
export function benchValidatorKey(): Sr25519Keypair {
  return Sr25519Keypair.fromSeed(BENCH_KEY_SEED);
}

/**
 * Environment for an app child (see `serveApp`) using `databaseUrl` and a fresh master key; the
 * validator key is a btwallet hotkey file written for it (always the same test key).
 */
export function benchAppEnv(databaseUrl: string): { env: NodeJS.ProcessEnv; masterKey: string } {
  const masterKey = `sk_master_bench_${randomBytes(16).toString('hex')}`;
  // A folder of this run's, removed as the benchmark exits: two runs at once (or another user's
  // files) no longer share one fixed folder, which each run emptied and none removed.
  const wallets = mkdtempSync(join(tmpdir(), 'validator-gateway-bench-wallets-'));
  process.once('exit', () => rmSync(wallets, { recursive: true, force: true }));
  createWalletHotkey(join(wallets, 'default', 'hotkeys', 'default'), { seed: BENCH_KEY_SEED });
  // Production needs a metagraph source: a subnet without neurons, unless the bench sets one.
  const emptyMetagraph = join(wallets, 'empty-metagraph.json');
  writeFileSync(emptyMetagraph, JSON.stringify({ netuid: 13, block: 0, neurons: [] }));
  return {
    masterKey,
    env: {
      ...process.env,
      ...BENCH_APP_SETTINGS,
      DATABASE_URL: databaseUrl,
      MASTER_KEY: masterKey,
      BT_WALLET_PATH: wallets,
      METAGRAPH_FILE: emptyMetagraph,
    },
  };
}

/**
 * Child side: starts the real service from the environment as main.ts does at its core (the
 * validator key, then createApp: migrations and the configured Nest app), without runGateway's
 * rest (.env, the data directory's check, the master key's resolution, crash logging, the
 * graceful shutdown, idle memory trimming, the configuration warnings and banner), and reports
 * its port to the parent. `bench:health` runs main.js itself.
 */
export async function serveApp(): Promise<void> {
  const config = loadConfig(process.env);
  const { databaseUrl, masterKey } = config;
  if (!databaseUrl || !masterKey) throw new Error('serveApp needs DATABASE_URL and MASTER_KEY');
  const validator = await loadValidatorKey(config.validatorKey, config.nodeEnv, config.dataDir);
  const app = await createApp({
    ...config,
    databaseUrl,
    masterKey,
    validatorKeypair: validator.keypair,
  });
  await app.listen(config.port, config.host);
  announcePort(app.getHttpServer());
}

export async function createApiKey(
  baseUrl: string,
  masterKey: string,
  name: string,
  tier: ApiKeyTier,
): Promise<ApiKeyCreatedDto> {
  const response = await fetch(`${baseUrl}/api/v1/keys`, {
    method: 'POST',
    headers: { 'X-API-Key': masterKey, 'Content-Type': 'application/json' },
    body: JSON.stringify({ name, tier }),
  });
  const text = await response.text();
  if (response.status !== 200) throw new Error(`POST /api/v1/keys: ${response.status} ${text}`);
  return JSON.parse(text) as ApiKeyCreatedDto;
}

/** Used on a persistent database, so that no live benchmark key is left behind. */
export async function deactivateApiKey(
  baseUrl: string,
  masterKey: string,
  id: string,
): Promise<void> {
  const response = await fetch(`${baseUrl}/api/v1/keys/${encodeURIComponent(id)}/deactivate`, {
    method: 'POST',
    headers: { 'X-API-Key': masterKey },
  });
  if (response.status !== 200) throw new Error(`deactivate key ${id}: ${response.status}`);
}
