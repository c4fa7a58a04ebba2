import { join } from 'node:path';
import { config as loadDotEnv } from 'dotenv';
import { Logger } from 'nestjs-pino';
import { createApp } from './bootstrap';
import { installGracefulShutdown } from './common/lifecycle/graceful-shutdown';
import { AppConfig } from './config/app-config';
import { ConfigError, loadConfig } from './config/load-config';
import { resolveMasterKey } from './config/master-key';
import { EmbeddedDatabase, startEmbeddedPostgres } from './database/embedded-postgres';
import { Devnet, startDevnet } from './devnet/devnet';
import { loadValidatorKey, ValidatorKey } from './network/bittensor/validator-key';

async function main(): Promise<void> {
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

  // Without a metagraph source, in development (or when DEVNET_MINERS asks for it), a simulated
  // miner network makes the first query return data; its metagraph lists our hotkey as a
  // validator with stake, so its miners take our signed calls. Health says `network: devnet`.
  let devnet: Devnet | undefined;
  let { network, repos } = config;
  if (network.devnetMiners > 0) {
    const directory = join(config.dataDir, 'devnet');
    devnet = await startDevnet({
      miners: network.devnetMiners,
      metagraphFile: join(directory, 'metagraph.json'),
      repoNamesFile: repos.hfResultsPath ? undefined : join(directory, 'hf_validation.parquet'),
      validatorHotkeys: [validator.keypair.address],
    });
    network = { ...network, metagraphFile: devnet.metagraphFile ?? undefined };
    repos = { hfResultsPath: repos.hfResultsPath ?? devnet.repoNamesFile ?? undefined };
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
      await devnet?.stop();
      await embedded?.stop();
    },
  });
  printBanner(config, embedded !== undefined, master, validator, devnet);
}

function printBanner(
  config: AppConfig,
  embedded: boolean,
  master: ReturnType<typeof resolveMasterKey>,
  validator: ValidatorKey,
  devnet?: Devnet,
): void {
  const base = `http://localhost:${config.port}`;
  const lines = [
    '',
    `  Validator gateway listening on ${base}`,
    `  Swagger UI:   ${base}/docs   (OpenAPI: ${base}/openapi.json)`,
    `  Database:     ${embedded ? 'embedded Postgres under the data directory' : 'DATABASE_URL'}`,
    `  Miners:       ${minersOrigin(config, devnet)}`,
    `  Validator:    ${validator.keypair.address}   (${validator.created ? 'generated: ' : ''}${validator.origin})`,
  ];
  // The generated development key is shown once, on the stdout of the start that created it.
  if (master.created)
    lines.push(`  Master key:   ${master.key}   (generated, saved to ${master.file})`);
  else if (master.file) lines.push(`  Master key:   saved in ${master.file}`);
  process.stdout.write(`${lines.join('\n')}\n\n`);
}

function minersOrigin(config: AppConfig, devnet: Devnet | undefined): string {
  if (devnet)
    return `SIMULATED devnet of ${devnet.miners.length} miners (set SUBTENSOR_URL for the real subnet)`;
  if (config.network.subtensor) return `subnet ${config.netuid} read from SUBTENSOR_URL`;
  return config.network.metagraphFile ? 'METAGRAPH_FILE' : 'none (no metagraph source)';
}

main().catch((error: unknown) => {
  if (error instanceof ConfigError) {
    process.stderr.write(`${error.message}\n`);
  } else {
    process.stderr.write(
      `Startup failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`,
    );
  }
  process.exit(1);
});
