import { join } from 'node:path';
import { config as loadDotEnv } from 'dotenv';
import { createApp } from './bootstrap';
import { ConfigError, loadConfig } from './config/load-config';
import { resolveMasterKey } from './config/master-key';
import { EmbeddedDatabase, startEmbeddedPostgres } from './database/embedded-postgres';

async function main(): Promise<void> {
  loadDotEnv();
  const config = loadConfig();
  const master = resolveMasterKey(config.masterKey, config.dataDir);

  let embedded: EmbeddedDatabase | undefined;
  let databaseUrl = config.databaseUrl;
  if (!databaseUrl) {
    embedded = await startEmbeddedPostgres(join(config.dataDir, 'postgres'), config.embeddedPostgresPort, 'validator', (m) =>
      process.stderr.write(`${m}\n`),
    );
    databaseUrl = embedded.url;
  }

  const app = await createApp({ ...config, databaseUrl, masterKey: master.key });
  await app.listen(config.port, config.host);
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.once(signal, () => {
      void app
        .close()
        .then(() => embedded?.stop())
        .finally(() => process.exit(0));
    });
  }
  printBanner(config.port, embedded !== undefined, master);
}

function printBanner(port: number, embedded: boolean, master: ReturnType<typeof resolveMasterKey>): void {
  const base = `http://localhost:${port}`;
  const lines = [
    '',
    `  Validator gateway listening on ${base}`,
    `  Swagger UI:   ${base}/docs   (OpenAPI: ${base}/openapi.json)`,
    `  Database:     ${embedded ? 'embedded Postgres under the data directory' : 'DATABASE_URL'}`,
  ];
  // The generated development key is shown once, on the stdout of the start that created it.
  if (master.created) lines.push(`  Master key:   ${master.key}   (generated, saved to ${master.file})`);
  else if (master.file) lines.push(`  Master key:   saved in ${master.file}`);
  process.stdout.write(`${lines.join('\n')}\n\n`);
}

main().catch((error: unknown) => {
  if (error instanceof ConfigError) {
    process.stderr.write(`${error.message}\n`);
  } else {
    process.stderr.write(`Startup failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  }
  process.exit(1);
});
