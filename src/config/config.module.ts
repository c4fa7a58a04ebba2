import { DynamicModule, Global, Inject, Module } from '@nestjs/common';
import { CLOCK_SETTINGS, ClockSettings } from '../common/clock/clock';
import { LOGGING_SETTINGS, LoggingSettings } from '../common/logging/logging.module';
import { REDIS_SETTINGS, RedisSettings } from '../common/redis/redis-connection';
import { logScannerFor, secretScannerFor } from '../common/security/secrets';
import { RATE_LIMIT_SETTINGS, RateLimitSettings } from '../common/throttling/rate-limit-settings';
import { AppConfig } from './app-config';

export const APP_CONFIG = Symbol('APP_CONFIG');

/** Injects the typed, already validated configuration. */
export const InjectConfig = (): ParameterDecorator => Inject(APP_CONFIG);

/**
 * The configuration, and the settings of the parts of `common/` that need some: each of those
 * declares what it needs (a settings interface and its token) and imports nothing from here, so
 * that `common/` stays below the configuration (docs/decisions.md, "common below config").
 */
@Global()
@Module({})
export class ConfigModule {
  static forRoot(config: AppConfig): DynamicModule {
    const clock: ClockSettings = { simulation: config.clockSimulation };
    const redis: RedisSettings = { url: config.redisUrl, keyPrefix: config.redisKeyPrefix };
    const rateLimits: RateLimitSettings = config.rateLimits;
    const logging = loggingSettingsFor(config);
    return {
      module: ConfigModule,
      providers: [
        { provide: APP_CONFIG, useValue: config },
        { provide: CLOCK_SETTINGS, useValue: clock },
        { provide: REDIS_SETTINGS, useValue: redis },
        { provide: RATE_LIMIT_SETTINGS, useValue: rateLimits },
        { provide: LOGGING_SETTINGS, useValue: logging },
      ],
      exports: [APP_CONFIG, CLOCK_SETTINGS, REDIS_SETTINGS, RATE_LIMIT_SETTINGS, LOGGING_SETTINGS],
    };
  }
}

/** How the process logs, for the app (above) and for start-up before the app (bootstrap.ts). */
export function loggingSettingsFor(config: AppConfig): LoggingSettings {
  return {
    level: config.logLevel,
    pretty: config.nodeEnv === 'development',
    destination: config.logDestination,
    scanner: secretScannerFor(config),
    lineScanner: logScannerFor(config),
  };
}
