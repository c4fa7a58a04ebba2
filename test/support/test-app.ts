import { randomBytes } from 'node:crypto';
import { AddressInfo } from 'node:net';
import { NestExpressApplication } from '@nestjs/platform-express';
import type { DestinationStream } from 'pino';
import supertest from 'supertest';
import { createApp, ResolvedConfig } from '../../src/bootstrap';
import { loadConfig } from '../../src/config/load-config';
import { Sr25519Keypair } from '../../src/network/bittensor/keypair';
import { loadValidatorKey } from '../../src/network/bittensor/validator-key';
import { NetworkService } from '../../src/network/network.service';
import { ApiContract, checkedAgainst } from './contract';
import { createDatabase, dropDatabase, scratchDatabaseName, testDatabaseUrl } from './database';

export const TEST_MASTER_KEY = 'sk_master_test_0123456789abcdef0123456789abcdef';
/** The validator key test apps sign with, unless a test gives its own. */
export const TEST_VALIDATOR_URI = '//Gateway';

/** The address of TEST_VALIDATOR_URI (devnets list it as a validator with stake). */
export function testValidatorHotkey(): string {
  return Sr25519Keypair.fromUri(TEST_VALIDATOR_URI).address;
}

export interface TestApp {
  app: NestExpressApplication;
  url: string;
  config: ResolvedConfig;
  /**
   * supertest bound to the running server over real HTTP on loopback; every answer is checked
   * against the served OpenAPI document (see ./contract.ts).
   */
  http: supertest.Agent;
  /** The served OpenAPI document, for checking answers received otherwise (`checkedFetch`). */
  contract: ApiContract;
  close(): Promise<void>;
}

export interface TestAppOptions {
  /**
   * A database of its own instead of the run's shared one: for tests that own global state,
   * such as the miners table a metagraph replaces.
   */
  ownDatabase?: boolean;
  /** Where log lines go instead of stdout (set LOG_LEVEL in `env` too, tests default to silent). */
  logDestination?: DestinationStream;
}

/**
 * Starts the real app (same bootstrap as main.ts) on an ephemeral loopback port against this
 * run's database. `env` takes environment variables, as a deployment would set them.
 */
export async function startTestApp(
  env: Record<string, string> = {},
  options: TestAppOptions = {},
): Promise<TestApp> {
  const ownDatabase = options.ownDatabase ? scratchDatabaseName('own') : undefined;
  const serverUrl = process.env.TEST_RUN_SERVER_URL!;
  const databaseUrl =
    env.DATABASE_URL ??
    (ownDatabase ? await createDatabase(serverUrl, ownDatabase) : testDatabaseUrl());
  const loaded = loadConfig({
    NODE_ENV: 'test',
    LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? 'silent',
    DEVNET_MINERS: '0',
    // Said, not left to NODE_ENV's default: some tests read recorded metagraphs whose axons are
    // real public machines (and test/support/loopback-only.ts refuses any such connection).
    MINER_ALLOWED_NETWORKS: 'loopback',
    // Index syncs run when a test asks for them (or sets INDEX_SYNC_ON_START itself).
    INDEX_SYNC_ON_START: 'false',
    // Apps meant to share Redis state pass one prefix (testRedisPrefix); the rest are isolated.
    REDIS_KEY_PREFIX: testRedisPrefix(),
    ...env,
  });
  // A test that names no key of its own signs as TEST_VALIDATOR_URI.
  const ownsKey = loaded.validatorKey.uri !== undefined || loaded.validatorKey.wallet.explicit;
  const keySettings = ownsKey
    ? loaded.validatorKey
    : { ...loaded.validatorKey, uri: TEST_VALIDATOR_URI };
  const validator = await loadValidatorKey(keySettings, loaded.nodeEnv, loaded.dataDir);
  const config: ResolvedConfig = {
    ...loaded,
    databaseUrl,
    masterKey: TEST_MASTER_KEY,
    validatorKeypair: validator.keypair,
    logDestination: options.logDestination,
  };
  const app = await createApp(config);
  await app.listen(0, '127.0.0.1');
  // Start-up waits for the first metagraph read 5 s at most (a node's read of 1,024 neurons can
  // take longer under jest): a test starts from the metagraph read, as before that bound.
  await app.get(NetworkService).whenReady();
  const { port } = app.getHttpServer().address() as AddressInfo;
  const url = `http://127.0.0.1:${port}`;
  const close = async () => {
    await app.close();
    if (ownDatabase) await dropDatabase(serverUrl, ownDatabase);
  };
  const contract = await ApiContract.load(url);
  const http = supertest.agent(url).use(checkedAgainst(contract));
  return { app, url, config, http, contract, close };
}

/**
 * A Redis key prefix of its own: the machine's Redis is shared with other test runs and
 * deployments, whose counters (failed logins from 127.0.0.1, budgets) must not leak in.
 */
export function testRedisPrefix(): string {
  return `gateway-test-${randomBytes(4).toString('hex')}:`;
}

export { testRedisUrl } from './test-redis';
