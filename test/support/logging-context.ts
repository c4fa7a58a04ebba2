import { Global, INestApplicationContext, Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import {
  LOGGING_SETTINGS,
  LoggingModule,
  LoggingSettings,
} from '../../src/common/logging/logging.module';
import type { SecretScanner } from '../../src/common/security/secret-scanner';
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
