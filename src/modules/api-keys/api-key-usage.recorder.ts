import { Injectable, Logger, OnModuleDestroy } from '@nestjs/common';
import { ApiKeysRepository } from './api-keys.repository';

const FLUSH_INTERVAL_MS = 5000;

/**
 * Collects `last_used_at` in memory and writes it in one statement every few seconds, so that
 * an authenticated request costs no database write.
 */
@Injectable()
export class ApiKeyUsageRecorder implements OnModuleDestroy {
  private readonly logger = new Logger(ApiKeyUsageRecorder.name);
  private pending = new Map<string, Date>();
  private readonly timer = setInterval(() => void this.flush(), FLUSH_INTERVAL_MS).unref();

  constructor(private readonly repository: ApiKeysRepository) {}

  record(keyId: string, at = new Date()): void {
    this.pending.set(keyId, at);
  }

  async flush(): Promise<void> {
    if (this.pending.size === 0) return;
    const batch = this.pending;
    this.pending = new Map();
    try {
      await this.repository.recordLastUsed(batch);
    } catch (error) {
      this.logger.warn(`could not record key usage: ${(error as Error).message}`);
    }
  }

  async onModuleDestroy(): Promise<void> {
    clearInterval(this.timer);
    await this.flush();
  }
}
