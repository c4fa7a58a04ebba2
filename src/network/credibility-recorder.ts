import { BeforeApplicationShutdown, Injectable, Logger } from '@nestjs/common';
import { WriteBuffer } from '../common/writes/write-buffer';
import { AppConfig } from '../config/app-config';
import { InjectConfig } from '../config/config.module';
import { MetagraphService } from './metagraph/metagraph.service';
import { MinerState } from './miner.entity';
import { CredibilityUpdate, MinersRepository } from './miners.repository';

/** How long observations of miners are gathered before they are written in one transaction. */
const CREDIBILITY_FLUSH_MS = 500;

/** A state change is written at once (next tick): it decides which miners are asked. */
const STATE_FLUSH_MS = 0;

type RecordedState = Exclude<MinerState, 'deregistered'>;

/**
 * A miner observed: its uid and the hotkey it was called as. A uid re-registered by another
 * hotkey while a call to the old one was in flight is another miner: what that call shows is
 * written to neither (an audit's finding: a late timeout of the old miner's made the new one
 * `failing` and cost it credibility before it was ever called).
 */
export interface ObservedMiner {
  uid: number;
  hotkey: string;
}

export interface MinerScore extends ObservedMiner {
  /** 0..1, or null when the observation says nothing about the miner. */
  score: number | null;
}

/** Folds one more observation `score` into `update` (or starts one). */
export function foldObservation(
  update: CredibilityUpdate | undefined,
  miner: ObservedMiner,
  score: number,
  alpha: number,
): CredibilityUpdate {
  const { decay, add } = update ?? { decay: 1, add: 0 };
  return {
    uid: miner.uid,
    hotkey: miner.hotkey,
    decay: decay * (1 - alpha),
    add: add * (1 - alpha) + alpha * score,
  };
}

/** The write buffers' key: one pending update per miner, as observed. */
function keyOf(miner: ObservedMiner): string {
  return `${miner.uid} ${miner.hotkey}`;
}

/**
 * Writes what the gateway observes of miners: credibility (from answers, index syncs, spot
 * checks and bucket fetches) and state changes. Observations are folded per miner and written
 * together every CREDIBILITY_FLUSH_MS: one transaction for all the queries of that window. The
 * in-memory metagraph follows each write. Shutdown waits for what is pending.
 */
@Injectable()
export class CredibilityRecorder implements BeforeApplicationShutdown {
  private readonly scores: WriteBuffer<string, CredibilityUpdate>;
  private readonly states: WriteBuffer<string, { miner: ObservedMiner; state: RecordedState }>;

  constructor(
    private readonly repository: MinersRepository,
    private readonly metagraph: MetagraphService,
    @InjectConfig() private readonly config: AppConfig,
  ) {
    const logger = new Logger(CredibilityRecorder.name);
    this.scores = new WriteBuffer({
      delayMs: CREDIBILITY_FLUSH_MS,
      write: async (batch) =>
        this.metagraph.updateCredibility(
          await this.repository.applyCredibilityUpdates([...batch.values()]),
        ),
      what: 'credibility',
      logger,
    });
    this.states = new WriteBuffer({
      delayMs: STATE_FLUSH_MS,
      write: async (batch) => {
        const { breakerCooldownMs } = this.config.network;
        for (const { miner, state } of batch.values())
          await this.repository.setState(miner, state, breakerCooldownMs);
      },
      what: 'miner state',
      logger,
    });
  }

  async beforeApplicationShutdown(): Promise<void> {
    await Promise.all([this.scores.close(), this.states.close()]);
  }

  /** Resolves once the credibility and state writes made so far are stored. */
  async settled(): Promise<void> {
    await Promise.all([this.scores.settled(), this.states.settled()]);
  }

  record(scores: readonly MinerScore[]): void {
    const alpha = this.config.network.credibilityAlpha;
    for (const { uid, hotkey, score } of scores) {
      if (score === null) continue;
      const miner = { uid, hotkey };
      this.scores.add(keyOf(miner), (pending) => foldObservation(pending, miner, score, alpha));
    }
  }

  recordState(miner: ObservedMiner, state: RecordedState): void {
    const observed = { uid: miner.uid, hotkey: miner.hotkey };
    this.metagraph.updateState(observed, state);
    this.states.add(keyOf(observed), () => ({ miner: observed, state }));
  }
}
