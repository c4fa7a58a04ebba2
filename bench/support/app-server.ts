import { randomBytes } from 'node:crypto';
import { createApp } from '../../src/bootstrap';
import { loadConfig } from '../../src/config/load-config';
import type { ApiKeyCreatedDto } from '../../src/modules/api-keys/dto/api-key-created.dto';
import type { ApiKeyTier } from '../../src/modules/api-keys/api-key-tier';
import { announcePort } from './child-server';

/**
 * Environment every app benchmark runs with, on top of the caller's environment (so tuning
 * variables such as DATABASE_POOL_SIZE or REDIS_URL still apply). Printed in the reports.
 */
export const BENCH_APP_SETTINGS = {
  // Production mode as deployed; it requires a hotkey, which the health body merely echoes.
  NODE_ENV: 'production',
  VALIDATOR_HOTKEY: '5BenchValidatorHotkeyXXXXXXXXXXXXXXXXXXXXXXXXXX',
  // Per-request logs would measure the logger (and flood the terminal), not the service.
  LOG_LEVEL: 'warn',
  // The real budget (1000/hour) would turn the benchmark into a stream of 429s within a second.
  RATE_LIMIT_VALIDATOR: '1000000000',
  // The in-memory throttler keeps one timestamp per request in the window; a one-second window
  // keeps that list near the size a real 1000/hour key reaches, instead of growing all run long.
  RATE_LIMIT_WINDOW_SECONDS: '1',
  HOST: '127.0.0.1',
  PORT: '0',
} as const;

/** Environment for an app child (see `serveApp`) using `databaseUrl` and a fresh master key. */
export function benchAppEnv(databaseUrl: string): { env: NodeJS.ProcessEnv; masterKey: string } {
  const masterKey = `sk_master_bench_${randomBytes(16).toString('hex')}`;
  return {
    masterKey,
    env: {
      ...process.env,
      ...BENCH_APP_SETTINGS,
      DATABASE_URL: databaseUrl,
      MASTER_KEY: masterKey,
    },
  };
}

/**
 * Child side: starts the real service exactly as main.ts does (createApp: migrations, then the
 * configured Nest app) from the environment, and reports its port to the parent.
 */
export async function serveApp(): Promise<void> {
  const config = loadConfig(process.env);
  const { databaseUrl, masterKey } = config;
  if (!databaseUrl || !masterKey) throw new Error('serveApp needs DATABASE_URL and MASTER_KEY');
  const app = await createApp({ ...config, databaseUrl, masterKey });
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
