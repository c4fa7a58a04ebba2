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

/** Usage of TypeORM's Postgres connection pool, read from the pool at scrape time. */
@Injectable()
export class DatabasePoolMetrics implements OnModuleInit {
  constructor(
    private readonly metrics: MetricsService,
    @InjectDataSource() private readonly dataSource: DataSource,
  ) {}

  onModuleInit(): void {
    this.metrics.gauge(
      'db_pool_connections',
      'Postgres pool: open connections (total), idle ones, and queries waiting for a connection (waiting)',
      ['state'],
      () => Promise.resolve(this.read()),
    );
  }

  private read(): { labels: { state: string }; value: number }[] {
    // TypeORM's PostgresDriver keeps the pg Pool as `master` (no replication configured).
    const pool = (this.dataSource.driver as unknown as { master?: PgPool }).master;
    if (!pool) return [];
    return [
      { labels: { state: 'total' }, value: pool.totalCount },
      { labels: { state: 'idle' }, value: pool.idleCount },
      { labels: { state: 'waiting' }, value: pool.waitingCount },
    ];
  }
}
