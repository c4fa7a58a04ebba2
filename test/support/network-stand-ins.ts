import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DataSource } from 'typeorm';
import { ChainReplay, startChainReplay } from './chain-replay';
import { createDatabase, dropDatabase, scratchDatabaseName } from './database';
import { createGravityRemote, GravityRemote } from './gravity-remote';

/** Where a vote-publication e2e spec's app publishes to: stand-ins on loopback or file://. */
export interface PublicationTargets {
  /** The chain (SUBTENSOR_URL): a chain replay's URL (chain-replay.ts). */
  subtensorUrl: string;
  /** The Gravity repository (GRAVITY_REPO_URL): a GravityRemote's URL (gravity-remote.ts). */
  gravityUrl: string;
  dataDir: string;
  netuid: number;
}

/**
 * The settings the vote-publication e2e specs start the app with, besides their own: the app
 * publishes to `targets`, the tests run the publication worker themselves (runOnce), and the
 * jobs the tests do not look at wait an hour or a day.
 */
export function publicationEnvironment(targets: PublicationTargets): Record<string, string> {
  return {
    SUBTENSOR_URL: targets.subtensorUrl,
    // The replay answers; reads of 1,024 neurons take seconds on a loaded machine.
    SUBTENSOR_TIMEOUT_MS: '60000',
    NETUID: String(targets.netuid),
    GRAVITY_REPO_URL: targets.gravityUrl,
    DATA_DIR: targets.dataDir,
    PUBLICATION_INTERVAL_MS: '3600000',
    TASK_LIFECYCLE_TICK: '86400',
    METAGRAPH_SYNC_INTERVAL: '3600',
  };
}

/**
 * What an e2e spec of the gateway's part in the network (reading votes, publishing its own)
 * starts its app against: a database of this run's own (with a connection for the test's own
 * queries), the chain replay, a Gravity repository and a data directory.
 */
export interface NetworkStandIns {
  databaseUrl: string;
  database: DataSource;
  replay: ChainReplay;
  remote: GravityRemote;
  dataDir: string;
  /** publicationEnvironment against these, with DATABASE_URL; `dataDir` for another replica. */
  environment(dataDir?: string): Record<string, string>;
  /** Closes the connection and stops or removes the rest: after the apps have closed. */
  stop(): Promise<void>;
}

/** Starts the stand-ins for the subnet `netuid`; `label` names the database and directory. */
export async function startNetworkStandIns(
  label: string,
  netuid: number,
): Promise<NetworkStandIns> {
  const serverUrl = process.env.TEST_RUN_SERVER_URL!;
  const databaseName = scratchDatabaseName(label);
  const standIns = {} as NetworkStandIns;
  standIns.environment = (dataDir = standIns.dataDir) => ({
    DATABASE_URL: standIns.databaseUrl,
    ...publicationEnvironment({
      subtensorUrl: standIns.replay.url,
      gravityUrl: standIns.remote.url,
      dataDir,
      netuid,
    }),
  });
  // Each part may be missing: a start that failed stops what it had started.
  standIns.stop = async () => {
    if (standIns.database?.isInitialized) await standIns.database.destroy();
    await standIns.replay?.stop();
    await dropDatabase(serverUrl, databaseName);
    standIns.remote?.remove();
    if (standIns.dataDir) rmSync(standIns.dataDir, { recursive: true, force: true });
  };
  try {
    standIns.databaseUrl = await createDatabase(serverUrl, databaseName);
    standIns.database = new DataSource({ type: 'postgres', url: standIns.databaseUrl });
    await standIns.database.initialize();
    standIns.replay = await startChainReplay();
    standIns.remote = createGravityRemote();
    standIns.dataDir = mkdtempSync(join(tmpdir(), `gateway-${label}-`));
  } catch (error) {
    await standIns.stop();
    throw error;
  }
  return standIns;
}
