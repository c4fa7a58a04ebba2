import { Injectable, OnModuleInit } from '@nestjs/common';
import { MetricsService } from '../../common/metrics/metrics.service';
import { HealthService } from './health.service';

/**
 * Whether Postgres answers, as health's database check says at scrape time: the gauges read from
 * Postgres keep their last values while it does not, and nothing else on /metrics says so (the
 * pool's connections only drop). Health's check, not a query of its own: one round trip a
 * second at most whoever asks (a balancer's polls, scrapes), on health's own connection, so a
 * pool held by slow work does not look like a database down.
 */
@Injectable()
export class HealthMetrics implements OnModuleInit {
  constructor(
    private readonly metrics: MetricsService,
    private readonly health: HealthService,
  ) {}

  onModuleInit(): void {
    this.metrics.gauge(
      'database_up',
      'Whether Postgres answered health’s round trip (at most a second old at scrape time): 1 or 0; while 0, the gauges read from Postgres keep their last values',
      [],
      async () => [{ labels: {}, value: (await this.health.databaseUp()) ? 1 : 0 }],
    );
  }
}
