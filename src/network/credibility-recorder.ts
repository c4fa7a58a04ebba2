import { BeforeApplicationShutdown, Injectable, Logger } from '@nestjs/common';
import { AppConfig } from '../config/app-config';
import { InjectConfig } from '../config/config.module';
import { MetagraphService } from './metagraph/metagraph.service';
import { MinerState } from './miner.entity';
import { CredibilityUpdate, foldObservation, MinersRepository } from './miners.repository';

/** How long observations of miners are gathered before they are written in one transaction. */
const CREDIBILITY_FLUSH_MS = 500;

export interface MinerScore {
  uid: number;
  /** 0..1, or null when the observation says nothing about the miner. */
  score: number | null;
}

/**
 * Writes what the gateway observes of miners: credibility (from answers, index syncs, spot
 * checks and bucket fetches) and state changes. Observations are folded per miner and written
 * together every CREDIBILITY_FLUSH_MS: one transaction for all the queries of that window.
 * Shutdown waits for what is pending.
 */
@Injectable()
export class CredibilityRecorder implements BeforeApplicationShutdown {
  private readonly logger = new Logger(CredibilityRecorder.name);
  /** Observations made after shutdown began are no longer recorded. */
  private shuttingDown = false;
  private readonly pendingWrites = new Set<Promise<void>>();
  private readonly pendingScores = new Map<number, CredibilityUpdate>();
  private flushTimer: NodeJS.Timeout | undefined;

  constructor(
    private readonly repository: MinersRepository,
    private readonly metagraph: MetagraphService,
    @InjectConfig() private readonly config: AppConfig,
  ) {}

  async beforeApplicationShutdown(): Promise<void> {
    this.shuttingDown = true;
    await this.settled();
  }

  /** Resolves once the credibility and state writes made so far are stored. */
  async settled(): Promise<void> {
    this.flush();
    while (this.pendingWrites.size > 0) await Promise.all(this.pendingWrites);
  }

  record(scores: readonly MinerScore[]): void {
    if (this.shuttingDown) return;
    const alpha = this.config.network.credibilityAlpha;
    let added = false;
    for (const { uid, score } of scores) {
      if (score === null) continue;
      this.pendingScores.set(uid, foldObservation(this.pendingScores.get(uid), uid, score, alpha));
      added = true;
    }
    if (added) this.flushTimer ??= setTimeout(() => this.flush(), CREDIBILITY_FLUSH_MS);
  }

  recordState(uid: number, state: Exclude<MinerState, 'deregistered'>): void {
    if (this.shuttingDown) return;
    this.metagraph.updateState(uid, state);
    this.track(
      this.repository
        .setState(uid, state)
        .catch((error: Error) =>
          this.logger.warn(`could not record miner state: ${error.message}`),
        ),
    );
  }

  private flush(): void {
    clearTimeout(this.flushTimer);
    this.flushTimer = undefined;
    const updates = [...this.pendingScores.values()];
    this.pendingScores.clear();
    if (updates.length === 0) return;
    this.track(
      this.repository
        .applyCredibilityUpdates(updates)
        .then((values) => this.metagraph.updateCredibility(values))
        .catch((error: Error) =>
          this.logger.warn(`could not record credibility: ${error.message}`),
        ),
    );
  }

  private track(write: Promise<void>): void {
    this.pendingWrites.add(write);
    void write.finally(() => this.pendingWrites.delete(write));
  }
}
