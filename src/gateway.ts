import { type AddressInfo, isIPv6 } from 'node:net';
import { join } from 'node:path';
import { Logger } from 'nestjs-pino';
import { createApp } from './bootstrap';
import { formatClockSimulation } from './common/clock/clock-simulation';
import { installCrashLogging } from './common/lifecycle/crash-logging';
import { exitOnSignal, installGracefulShutdown } from './common/lifecycle/graceful-shutdown';
import { startIdleMemoryTrim } from './common/lifecycle/idle-memory';
import { SecretScanner } from './common/security/secret-scanner';
import { logScannerFor, secretScannerFor } from './common/security/secrets';
import {
  databaseFailure,
  listenFailure,
  StartupError,
  withoutPassword,
} from './common/lifecycle/startup-failure';
import { AppConfig } from './config/app-config';
import { checkDataDirectory } from './config/data-directory';
import { configWarnings } from './config/config-warnings';
import { ConfigError, loadConfig } from './config/load-config';
import { masterKeyShown, resolveMasterKey } from './config/master-key';
import { EmbeddedDatabase, startEmbeddedPostgres } from './database/embedded-postgres';
import { LockWaitEnded } from './database/migration-lock';
import { loadValidatorKey, ValidatorKey } from './network/bittensor/validator-key';
import { nodeAddress } from './common/security/node-address';
import { ShutdownNotice } from './common/lifecycle/shutdown-notice';
import { loadEnvFile } from './config/env-file';
import { GATEWAY_USAGE, gatewayRequest } from './gateway-arguments';

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
 * start-up failure is printed (startupFailureText) and exits with 1; a start stopped by a
 * signal while it waited for the migration lock exits 0. `--help` prints its usage, any other
 * argument exits 2 (gatewayRequest).
 */
export function runGateway(simulate?: SimulatedNetworkStarter): void {
  let request: ReturnType<typeof gatewayRequest>;
  try {
    request = gatewayRequest(process.argv.slice(2));
  } catch (error) {
    process.stderr.write(`gateway: ${(error as Error).message}\n`);
    process.exit(2);
  }
  if (request === 'help') {
    process.stdout.write(`${GATEWAY_USAGE.join('\n')}\n`);
    return;
  }
  const started: StartingGateway = {};
  startGateway(simulate, started).catch((error: unknown) => {
    if (error instanceof StartStopped) process.exit(0);
    process.stderr.write(`${startupFailureText(error, started.scanner)}\n`);
    process.exit(1);
  });
}

/**
 * A start stopped by a shutdown signal where it could stop cleanly (the wait for the migration
 * lock), said in the log already: exits 0, as a shutdown does (README, "Shutdown").
 */
class StartStopped extends Error {}

/** What a start that failed had got to, for its message. */
interface StartingGateway {
  /** The scanner for the configuration's secrets, once the configuration is read. */
  scanner?: SecretScanner;
}

/**
 * A known failure (the configuration, the database, the port) as one line naming its setting,
 * any other with its stack. Printed to stderr, not through the logger (which may not exist yet),
 * so the scanner the logger would use replaces the secrets it knows (the master key, tokens, the
 * node's credentials, the database's and Redis' passwords, issued keys, any URL's password): an
 * unknown failure's message or stack can quote anything.
 */
export function startupFailureText(
  error: unknown,
  // Before the configuration is read, issued keys are still known by their shape.
  scanner: SecretScanner = secretScannerFor({}),
): string {
  const text =
    error instanceof ConfigError || error instanceof StartupError
      ? error.message
      : `Startup failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`;
  return scanner.scrub(text);
}

async function startGateway(
  simulate: SimulatedNetworkStarter | undefined,
  started: StartingGateway,
): Promise<void> {
  // A signal during start-up exits at once, but for one that ends a wait for another replica's
  // migration lock: nothing is done yet, so it stops cleanly, says so and exits 0 (StartStopped).
  // Once the app is built, listening starts its jobs (onApplicationBootstrap): a signal then is
  // kept and raised again once the graceful shutdown is installed, which stops them (an exit at
  // once left a job run `running`, with no line in the log: a shutdown audit's finding).
  let endLockWait: ((reason: string) => void) | undefined;
  let appBuilt = false;
  let signalWhileListening: NodeJS.Signals | undefined;
  const stopExitingOnSignal = exitOnSignal((signal) => {
    if (endLockWait) endLockWait(signal);
    else if (appBuilt) signalWhileListening = signal;
    else return false;
    return true;
  });
  loadEnvFile();
  const config = loadConfig();
  await checkDataDirectory(config.dataDir);
  const master = resolveMasterKey(config.masterKey, config.dataDir);
  started.scanner = logScannerFor({ ...config, masterKey: master.key });
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

  const stopStarted = async () => {
    await simulated?.stop();
    await embedded?.stop();
  };
  let app: Awaited<ReturnType<typeof createApp>>;
  try {
    app = await createApp(
      {
        ...config,
        network,
        repos,
        databaseUrl,
        masterKey: master.key,
        validatorKeypair: validator.keypair,
      },
      (end) => {
        endLockWait = end;
        return () => (endLockWait = undefined);
      },
    );
  } catch (error) {
    await stopStarted();
    if (error instanceof LockWaitEnded) throw new StartStopped();
    throw databaseFailure(
      error,
      config.databaseUrl
        ? `DATABASE_URL=${withoutPassword(config.databaseUrl)}`
        : `the embedded Postgres (EMBEDDED_POSTGRES_PORT=${config.embeddedPostgresPort})`,
      config.databaseUrl,
    );
  }
  appBuilt = true;
  const logger = app.get(Logger);
  installCrashLogging(logger);
  embedded?.logTo({
    warn: (message) => logger.warn(message, 'EmbeddedPostgres'),
    error: (message) => logger.error(message, 'EmbeddedPostgres'),
  });
  try {
    await app.listen(config.port, config.host);
  } catch (error) {
    await app.close();
    await stopStarted();
    throw listenFailure(error, config.host, config.port);
  }
  const idleMemory = startIdleMemoryTrim(app.getHttpServer(), logger, config.idleMemoryCheckMs);
  installGracefulShutdown(app, {
    timeoutMs: config.shutdownTimeoutMs,
    logger,
    notice: app.get(ShutdownNotice),
    afterClose: async () => {
      idleMemory?.stop();
      await stopStarted();
    },
  });
  stopExitingOnSignal();
  if (signalWhileListening) {
    process.kill(process.pid, signalWhileListening);
    return;
  }
  for (const warning of configWarnings(config)) logger.warn(warning, 'Config');
  // The port listened on: PORT=0 takes a free one (the banner said `localhost:0`).
  const { port } = app.getHttpServer().address() as AddressInfo;
  const facts = bannerFacts({ ...config, port }, embedded !== undefined, validator, simulated);
  // Production logs one JSON object per line on stdout: the banner is one of them.
  if (config.nodeEnv === 'production') logger.log(facts, 'Gateway');
  else printBanner(facts, master);
}

/** What the start banner says, as the fields of production's JSON line. */
interface BannerFacts {
  msg: string;
  url: string;
  docs: string;
  openapi: string;
  database: string;
  miners: string;
  validator: string;
  validatorOrigin: string;
  clockSimulation?: string;
}

function bannerFacts(
  config: AppConfig,
  embedded: boolean,
  validator: ValidatorKey,
  simulated: SimulatedNetwork | undefined,
): BannerFacts {
  const base = listenUrl(config.host, config.port);
  return {
    msg: `Validator gateway listening on ${base}`,
    url: base,
    docs: `${base}/docs`,
    openapi: `${base}/openapi.json`,
    database: embedded ? 'embedded Postgres under the data directory' : 'DATABASE_URL',
    miners: minersOrigin(config, simulated),
    validator: validator.keypair.address,
    validatorOrigin: `${validator.created ? 'generated: ' : ''}${validator.origin}`,
    ...(config.clockSimulation
      ? { clockSimulation: formatClockSimulation(config.clockSimulation) }
      : {}),
  };
}

/**
 * The address the banner gives: `localhost` for a wildcard HOST (every interface, the default),
 * else HOST itself, an IPv6 address in brackets. It said `localhost` whatever HOST was, which a
 * gateway listening on one interface (`HOST=10.0.0.5`) does not answer on (an operator audit).
 */
export function listenUrl(host: string, port: number): string {
  const name = WILDCARD_HOSTS.has(host) ? 'localhost' : isIPv6(host) ? `[${host}]` : host;
  return `http://${name}:${port}`;
}

const WILDCARD_HOSTS = new Set(['', '0.0.0.0', '::']);

/** The human banner of development and tests, on stdout. */
function printBanner(facts: BannerFacts, master: ReturnType<typeof resolveMasterKey>): void {
  const lines = [
    '',
    `  ${facts.msg}`,
    `  Swagger UI:   ${facts.docs}   (OpenAPI: ${facts.openapi})`,
    `  Database:     ${facts.database}`,
    `  Miners:       ${facts.miners}`,
    `  Validator:    ${facts.validator}   (${facts.validatorOrigin})`,
  ];
  if (facts.clockSimulation)
    lines.push(`  Clock:        SIMULATED (CLOCK_SIMULATION=${facts.clockSimulation}, tests only)`);
  // The generated development key is shown once, on the stdout of the first start that gets
  // here: the one that created it, or the next after one that stopped before its banner.
  if (master.created)
    lines.push(`  Master key:   ${master.key}   (generated, saved to ${master.file})`);
  else if (master.unshown)
    lines.push(
      `  Master key:   ${master.key}   (generated by an earlier start that did not complete, saved in ${master.file})`,
    );
  else if (master.file) lines.push(`  Master key:   saved in ${master.file}`);
  if (master.exposed)
    lines.push(
      `  WARNING:      ${master.file} is open to other users (group or others): chmod 600 it`,
    );
  process.stdout.write(`${lines.join('\n')}\n\n`);
  masterKeyShown(master);
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
