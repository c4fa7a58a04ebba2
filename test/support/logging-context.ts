import { Global, INestApplicationContext, Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { Logger } from 'nestjs-pino';
import { __resetOutOfContextForTests } from 'nestjs-pino/PinoLogger';
import {
  LOGGING_SETTINGS,
  LoggingModule,
  LoggingSettings,
} from '../../src/common/logging/logging.module';
import type { SecretScanner } from '../../src/common/security/secret-scanner';
import { secretScannerFor } from '../../src/common/security/secrets';
import { LogCapture } from './log-capture';

/**
 * LoggingModule alone in an application context, at `level`, its lines written to a capture
 * (JSON, not pretty) and scrubbed by `scanner`, as the app sets it up. Close the context.
 */
export async function loggingContext(
  level: string,
  scanner: SecretScanner,
): Promise<{ context: INestApplicationContext; capture: LogCapture }> {
  const capture = new LogCapture();
  const settings: LoggingSettings = {
    level,
    pretty: false,
    destination: capture,
    scanner,
    lineScanner: scanner,
  };
  @Global()
  @Module({
    providers: [{ provide: LOGGING_SETTINGS, useValue: settings }],
    exports: [LOGGING_SETTINGS],
  })
  class SettingsModule {}
  @Module({ imports: [SettingsModule, LoggingModule] })
  class LoggingApp {}
  const context = await NestFactory.createApplicationContext(LoggingApp, { logger: false });
  return { context, capture };
}

/** A JSON line as pino writes it, with the Nest context it was written under. */
export type LogLine = Record<string, unknown> & { level: number; msg: string; context?: string };

/**
 * The lines written under Nest context `name` while `run` runs, with Nest's Logger writing
 * through LoggingModule at `level` (as the app sets it up; debugEnabled follows it).
 */
export async function linesLoggedBy(
  name: string,
  level: string,
  run: () => Promise<unknown>,
): Promise<LogLine[]> {
  // nestjs-pino keeps the first app's logger for lines outside a request, for the process: each
  // call's app is a first one.
  __resetOutOfContextForTests();
  const { context, capture } = await loggingContext(level, secretScannerFor({}));
  context.useLogger(context.get(Logger));
  try {
    await run();
  } finally {
    await context.close();
  }
  return capture.lines<LogLine>().filter((line) => line.context === name);
}
