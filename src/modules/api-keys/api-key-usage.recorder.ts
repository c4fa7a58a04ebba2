import { Injectable, Logger, OnModuleDestroy } from '@nestjs/common';
import { WriteBuffer } from '../../common/writes/write-buffer';
import { ApiKeysRepository } from './api-keys.repository';

const FLUSH_DELAY_MS = 5000;

/**
 * Collects `last_used_at` in memory and writes it in one statement a few seconds after the
 * first use, so that an authenticated request costs no database write.
 */
@Injectable()
export class ApiKeyUsageRecorder implements OnModuleDestroy {
  private readonly lastUsed: WriteBuffer<string, Date>;

  constructor(repository: ApiKeysRepository) {
    this.lastUsed = new WriteBuffer({
      delayMs: FLUSH_DELAY_MS,
      write: (batch) => repository.recordLastUsed(batch),
      what: 'key usage',
      logger: new Logger(ApiKeyUsageRecorder.name),
    });
  }

  record(keyId: string, at: Date): void {
    this.lastUsed.add(keyId, () => at);
  }

  /** Resolves once the usage recorded so far is stored. */
  settled(): Promise<void> {
    return this.lastUsed.settled();
  }

  onModuleDestroy(): Promise<void> {
    return this.lastUsed.close();
  }
}
