import { DynamicModule, Module } from '@nestjs/common';
import { APP_GUARD } from '@nestjs/core';
import { TypeOrmModule } from '@nestjs/typeorm';
import { AccessLevelGuard, ApiKeyGuard } from './modules/api-keys/api-key.guard';
import { AuthFailureLimiter } from './modules/api-keys/auth-failure-limiter';
import { MisplacedSecretGuard } from './common/http/misplaced-secret.guard';
import { DatabaseOutageModule } from './common/database-outage-log';
import { LoggingModule } from './common/logging/logging.module';
import { MetricsModule } from './common/metrics/metrics.module';
import { RedisModule } from './common/redis/redis.module';
import { RateLimitGuard } from './common/throttling/rate-limit.guard';
import { ThrottlingModule } from './common/throttling/throttling.module';
import { ClockModule } from './common/clock/clock';
import { ShutdownNoticeModule } from './common/lifecycle/shutdown-notice';
import { AppConfig } from './config/app-config';
import { ConfigModule } from './config/config.module';
import { buildDataSourceOptions } from './database/data-source-options';
import { ApiKeysModule } from './modules/api-keys/api-keys.module';
import { DataQueryModule } from './modules/data-query/data-query.module';
import { DesirabilityModule } from './modules/desirability/desirability.module';
import { HealthModule } from './modules/health/health.module';
import { MetricsEndpointModule } from './modules/metrics/metrics-endpoint.module';
import { MinersModule } from './modules/miners/miners.module';
import { PublicationModule } from './modules/publication/publication.module';
import { ReposModule } from './modules/repos/repos.module';
import { StatsModule } from './modules/stats/stats.module';
import { TasksModule } from './modules/tasks/tasks.module';
import { Sr25519Keypair } from './network/bittensor/keypair';
import { ValidatorIdentityModule } from './network/bittensor/validator-identity';

@Module({})
export class AppModule {
  /**
   * The configuration is loaded (database URL and validator key resolved) before the module is
   * built.
   */
  static forRoot(
    config: AppConfig & { databaseUrl: string; validatorKeypair: Sr25519Keypair },
  ): DynamicModule {
    return {
      module: AppModule,
      imports: [
        ConfigModule.forRoot(config),
        ValidatorIdentityModule.forRoot(config.validatorKeypair),
        ClockModule,
        ShutdownNoticeModule,
        LoggingModule,
        DatabaseOutageModule,
        MetricsModule,
        MetricsEndpointModule,
        TypeOrmModule.forRoot({
          ...buildDataSourceOptions(config.databaseUrl, config.database),
          // A module that maps a table to an entity registers it (TypeOrmModule.forFeature).
          autoLoadEntities: true,
          // The migrations have just reached the database: a pool that cannot connect now (too
          // many connections, a failover) is a start-up failure to report, not 27 s of retries.
          retryAttempts: 0,
        }),
        RedisModule,
        ThrottlingModule,
        ApiKeysModule,
        HealthModule,
        MinersModule,
        DataQueryModule,
        DesirabilityModule,
        PublicationModule,
        ReposModule,
        StatsModule,
        TasksModule,
      ],
      providers: [
        AuthFailureLimiter,
        // Order matters: authenticate, then charge the key's budget, then check its privilege,
        // then look for a secret the request carries outside the headers (docs/decisions.md,
        // "Refuse, don't store").
        { provide: APP_GUARD, useClass: ApiKeyGuard },
        { provide: APP_GUARD, useClass: RateLimitGuard },
        { provide: APP_GUARD, useClass: AccessLevelGuard },
        { provide: APP_GUARD, useClass: MisplacedSecretGuard },
      ],
    };
  }
}
