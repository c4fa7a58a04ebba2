import { Injectable, OnModuleDestroy } from '@nestjs/common';
import { Pool } from 'pg';
import { AppConfig } from '../../config/app-config';
import { InjectConfig } from '../../config/config.module';
import { buildProbePoolConfig } from '../../database/data-source-options';

/**
 * Asks Postgres over a connection of its own (buildProbePoolConfig): a pool whose connections
 * are all held by slow work does not make a healthy database look down.
 */
@Injectable()
export class HealthRepository implements OnModuleDestroy {
  private readonly probe: Pool;

  constructor(@InjectConfig() config: AppConfig) {
    // The URL is resolved (embedded Postgres started) before the app is built: AppModule.forRoot.
    this.probe = new Pool(buildProbePoolConfig(config.databaseUrl!, config.database));
    // pg-pool re-emits an idle connection's error (Postgres restarting) here: the ping says so.
    this.probe.on('error', () => undefined);
  }

  async ping(): Promise<void> {
    await this.probe.query('SELECT 1');
  }

  /** Waits at most for a check in flight to time out (PROBE_QUERY_TIMEOUT_MS). */
  async onModuleDestroy(): Promise<void> {
    await this.probe.end();
  }
}
