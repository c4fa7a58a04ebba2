import { join } from 'node:path';
import { config as loadDotEnv } from 'dotenv';
import { Logger } from 'nestjs-pino';
import { createApp } from './bootstrap';
import { formatClockSimulation } from './common/clock/clock-simulation';
import { installGracefulShutdown } from './common/lifecycle/graceful-shutdown';
import { AppConfig } from './config/app-config';
import { ConfigError, loadConfig } from './config/load-config';
import { resolveMasterKey } from './config/master-key';
import { EmbeddedDatabase, startEmbeddedPostgres } from './database/embedded-postgres';
import { loadValidatorKey, ValidatorKey } from './network/bittensor/validator-key';
import { nodeAddress } from './network/chain/subtensor-connection';

/**
 * A network started beside the gateway in place of a metagraph source. The development entry
 * point (src/devnet/start-with-devnet.ts, `npm start`) passes the devnet; the production entry
 * point (main.ts) passes nothing, so the production build holds no simulator.
 */
export interface SimulatedNetwork {
  /** The metagraph file the gateway reads (METAGRAPH_FILE). */
  readonly metagraphFile: string;
  /** A validation file of repositories, used when HF_RESULTS_PATH is not set. */
  readonly repoNamesFile?: string;
  /** How the start banner names the miners. */
  readonly description: string;
  stop(): Promise<void>;
}

/** Starts the simulated network for this configuration (whose validator is `validatorHotkey`). */
export type SimulatedNetworkStarter = (
  config: AppConfig,
  validatorHotkey: string,
) => Promise<SimulatedNetwork>;

/**
 * The process entry of the gateway, shared by both entry points: reads the environment, starts
 * the embedded Postgres when no DATABASE_URL is set, then the app, and prints the banner. Any
 * start-up failure is printed and exits with 1.
 */
export function runGateway(simulate?: SimulatedNetworkStarter): void {
  startGateway(simulate).catch((error: unknown) => {
    if (error instanceof ConfigError) {
      process.stderr.write(`${error.message}\n`);
    } else {
      process.stderr.write(
        `Startup failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`,
      );
    }
    process.exit(1);
  });
}

async function startGateway(simulate: SimulatedNetworkStarter | undefined): Promise<void> {
  loadDotEnv();
  const config = loadConfig();
  const master = resolveMasterKey(config.masterKey, config.dataDir);
  const validator = await loadValidatorKey(config.validatorKey, config.nodeEnv, config.dataDir);

  let embedded: EmbeddedDatabase | undefined;
  let databaseUrl = config.databaseUrl;
  if (!databaseUrl) {
    embedded = await startEmbeddedPostgres(
      join(config.dataDir, 'postgres'),
      config.embeddedPostgresPort,
      'validator',
      (m) => process.stderr.write(`${m}\n`),
    );
    databaseUrl = embedded.url;
  }

  // DEVNET_MINERS > 0 (development without a metagraph source, by default): the simulated
  // network stands in for the metagraph source, when this entry point brings one.
  let simulated: SimulatedNetwork | undefined;
  let { network, repos } = config;
  if (network.devnetMiners > 0 && simulate) {
    simulated = await simulate(config, validator.keypair.address);
    network = { ...network, metagraphFile: simulated.metagraphFile };
    repos = { hfResultsPath: repos.hfResultsPath ?? simulated.repoNamesFile };
  }

  const app = await createApp({
    ...config,
    network,
    repos,
    databaseUrl,
    masterKey: master.key,
    validatorKeypair: validator.keypair,
  });
  await app.listen(config.port, config.host);
  installGracefulShutdown(app, {
    timeoutMs: config.shutdownTimeoutMs,
    logger: app.get(Logger),
    afterClose: async () => {
      await simulated?.stop();
      await embedded?.stop();
    },
  });
  printBanner(config, embedded !== undefined, master, validator, simulated);
}

function printBanner(
  config: AppConfig,
  embedded: boolean,
  master: ReturnType<typeof resolveMasterKey>,
  validator: ValidatorKey,
  simulated: SimulatedNetwork | undefined,
): void {
  const base = `http://localhost:${config.port}`;
  const lines = [
    '',
    `  Validator gateway listening on ${base}`,
    `  Swagger UI:   ${base}/docs   (OpenAPI: ${base}/openapi.json)`,
    `  Database:     ${embedded ? 'embedded Postgres under the data directory' : 'DATABASE_URL'}`,
    `  Miners:       ${minersOrigin(config, simulated)}`,
    `  Validator:    ${validator.keypair.address}   (${validator.created ? 'generated: ' : ''}${validator.origin})`,
  ];
  if (config.clockSimulation)
    lines.push(
      `  Clock:        SIMULATED (CLOCK_SIMULATION=${formatClockSimulation(config.clockSimulation)}, tests only)`,
    );
  // The generated development key is shown once, on the stdout of the start that created it.
  if (master.created)
    lines.push(`  Master key:   ${master.key}   (generated, saved to ${master.file})`);
  else if (master.file) lines.push(`  Master key:   saved in ${master.file}`);
  process.stdout.write(`${lines.join('\n')}\n\n`);
}

function minersOrigin(config: AppConfig, simulated: SimulatedNetwork | undefined): string {
  if (simulated) return simulated.description;
  if (config.network.subtensor)
    return `subnet ${config.netuid} read from SUBTENSOR_URL (${nodeAddress(config.network.subtensor.url)}; the log names its chain)`;
  if (config.network.metagraphFile) return 'METAGRAPH_FILE';
  return config.network.devnetMiners > 0
    ? 'none (no metagraph source; `npm start` runs a simulated devnet beside the gateway)'
    : 'none (no metagraph source)';
}
