import { DataSource } from 'typeorm';
import { DatabasePoolMetrics } from '../../src/common/metrics/database-pool.metrics';
import { MetricsService } from '../../src/common/metrics/metrics.service';
import { buildDataSourceOptions } from '../../src/database/data-source-options';
import { testDatabaseUrl } from '../support/database';
import { sample } from '../support/prometheus-text';
import { until } from '../support/until';

/**
 * What `gateway_db_pool_waiting_requests` counts, on a real pool of one connection: each request
 * for a connection that waits (a query, or a transaction, whatever its statements), not
 * connections and not queries.
 */
describe('the database pool gauges', () => {
  let pool: DataSource;
  let metrics: MetricsService;

  beforeAll(async () => {
    // Requests wait longer than the test takes, so none gives up while it counts them.
    pool = new DataSource(
      buildDataSourceOptions(testDatabaseUrl(), { poolSize: 1, connectTimeoutMs: 30_000 }),
    );
    await pool.initialize();
    metrics = new MetricsService();
    new DatabasePoolMetrics(metrics, pool).onModuleInit();
  });
  afterAll(async () => {
    await pool.destroy();
  });

  it('counts the queries and transactions waiting for the one connection, a transaction once', async () => {
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    // The only connection, held by a transaction until the test lets it go.
    const holder = pool.transaction(() => held);
    const waiting = async () => sample(await metrics.scrape(), 'gateway_db_pool_waiting_requests');
    const idle = async () =>
      sample(await metrics.scrape(), 'gateway_db_pool_connections', { state: 'idle' });
    await until(async () => (await idle()) === 0 || undefined, 5_000);

    const queries = [pool.query('SELECT 1'), pool.query('SELECT 2')];
    const transaction = pool.transaction(async (manager) => {
      for (let n = 0; n < 3; n++) await manager.query('SELECT $1::int', [n]);
    });
    // Two queries and one transaction of three statements: three requests, and no more later.
    await until(async () => ((await waiting()) ?? 0) >= 3 || undefined, 5_000);
    await new Promise((resolve) => setTimeout(resolve, 200));
    const text = await metrics.scrape();
    expect(sample(text, 'gateway_db_pool_waiting_requests')).toBe(3);
    expect(sample(text, 'gateway_db_pool_connections', { state: 'total' })).toBe(1);
    expect(sample(text, 'gateway_db_pool_connections', { state: 'idle' })).toBe(0);
    release();
    await Promise.all([holder, ...queries, transaction]);
    expect(await waiting()).toBe(0);
  });
});
