import { Injectable, OnModuleInit } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { MetricsService } from './metrics.service';

/** The fields of node-postgres' Pool that describe its usage. */
interface PgPool {
  totalCount: number;
  idleCount: number;
  waitingCount: number;
}

/**
 * Usage of TypeORM's Postgres connection pool, read from the pool at scrape time. The requests
 * waiting for a connection are a gauge of their own: pg-pool's `waitingCount` counts checkouts
 * (a query, or a transaction whatever its statements), not connections (docs/decisions.md,
 * "Metrics and logs": **The pool's waiting requests are not connections**).
 */
@Injectable()
export class DatabasePoolMetrics implements OnModuleInit {
  constructor(
    private readonly metrics: MetricsService,
    @InjectDataSource() private readonly dataSource: DataSource,
  ) {}

  onModuleInit(): void {
    this.metrics.gauge(
      'db_pool_connections',
      'Postgres pool connections: open (total, opening ones included) and idle',
      ['state'],
      () => {
        const pool = this.pool();
        if (!pool) return Promise.resolve([]);
        return Promise.resolve([
          { labels: { state: 'total' }, value: pool.totalCount },
          { labels: { state: 'idle' }, value: pool.idleCount },
        ]);
      },
    );
    this.metrics.gauge(
      'db_pool_waiting_requests',
      'Requests for a Postgres pool connection waiting for one to come free: a query, or a transaction, each waits as one',
      [],
      () => {
        const pool = this.pool();
        return Promise.resolve(pool ? [{ labels: {}, value: pool.waitingCount }] : []);
      },
    );
  }

  private pool(): PgPool | undefined {
    // TypeORM's PostgresDriver keeps the pg Pool as `master` (no replication configured).
    return (this.dataSource.driver as unknown as { master?: PgPool }).master;
  }
}
