import { Logger } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { NestExpressApplication } from '@nestjs/platform-express';
import express from 'express';
import { AppModule } from './app.module';
import { configureApp } from './app.setup';
import { ExpressServerAdapter } from './common/http/express-server-adapter';
import { createStartupLogger } from './common/logging/logging.module';
import { AppConfig } from './config/app-config';
import { loggingSettingsFor } from './config/config.module';
import { describeMigrations, migrateDatabase } from './database/migrate';
import { LockWaitEnded, MigrationProgress } from './database/migration-lock';
import { Sr25519Keypair } from './network/bittensor/keypair';

/** The configuration once the database, the master key and the validator's key are known. */
export type ResolvedConfig = AppConfig & {
  databaseUrl: string;
  masterKey: string;
  validatorKeypair: Sr25519Keypair;
};

/**
 * Migrates the database, then builds the configured app (not yet listening). `onLockWait` is
 * told of a wait for another replica's migration lock, with the function that ends it
 * (MigrationProgress.onWait): the gateway ends it on a shutdown signal, and this then fails
 * with LockWaitEnded, having logged it.
 */
export async function createApp(
  config: ResolvedConfig,
  onLockWait?: MigrationProgress['onWait'],
): Promise<NestExpressApplication> {
  // A wait for another replica's migration lock is logged as it happens, before the app's
  // logger exists (its lines are buffered until the app is built): a silent wait looked hung.
  // Made only then: most starts find the lock free and never log here.
  let startupLog: ReturnType<typeof createStartupLogger> | undefined;
  const report = (line: string) => {
    startupLog ??= createStartupLogger(loggingSettingsFor(config)).child({ context: 'Database' });
    startupLog.info(line);
  };
  const migrations = await migrateDatabase(config.databaseUrl, config.database.connectTimeoutMs, {
    report,
    onWait: onLockWait,
  }).catch((error: unknown) => {
    if (error instanceof LockWaitEnded) report(error.message);
    throw error;
  });
  const app = await NestFactory.create<NestExpressApplication>(
    AppModule.forRoot(config),
    // Paths are matched case-sensitively, as Starlette matches them: `/API/V1/HEALTH` is a 404,
    // not health (Express's default ignores case). Set before Nest registers a route: Express's
    // router takes the setting when it is first made, and ignores later changes.
    new ExpressServerAdapter(express().set('case sensitive routing', true)),
    {
      bodyParser: false,
      // A module that cannot be built (the pool's first connection refused, say) is thrown to
      // the caller, whose start-up failure handling names it in one line (gateway.ts). Nest's
      // own printed the buffered logs and the error's stack as text and exited by itself.
      abortOnError: false,
      bufferLogs: true,
      autoFlushLogs: false,
    },
  );
  configureApp(app, config);
  // The logs buffered while the app was built, written once its logger is in place.
  app.flushLogs();
  // Logged once the app's logger is in place (bufferLogs): what an upgrade changed, in the log.
  const { log, warn, vacuum } = describeMigrations(migrations);
  const logger = new Logger('Database');
  if (log) logger.log(log);
  if (warn) logger.warn(warn);
  if (vacuum) logger.warn(vacuum);
  return app;
}
