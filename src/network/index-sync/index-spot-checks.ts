import { Injectable, Logger } from '@nestjs/common';
import { minerFields } from '../../common/logging/miner-fields';
import { AppConfig } from '../../config/app-config';
import { InjectConfig } from '../../config/config.module';
import { IndexRow } from '../index/compressed-index';
import { ServingMiner } from '../miner.entity';
import { NetworkService } from '../network.service';
import { CallBudgets } from '../transport/call-budgets';

/**
 * A miner whose index a sync has just stored, with the one bucket of it a spot check would fetch
 * (IndexSpotChecks.pick), not the whole index: a run keeps every synced miner until its spot
 * checks, and a full index is up to 350,000 rows (about 20 MB parsed).
 */
export interface SyncedMiner {
  miner: ServingMiner;
  bucket: IndexRow;
}

/** One spot check's verdict (score 0: the bucket could not be fetched, by the miner's fault). */
export interface SpotCheckResult {
  uid: number;
  score: number;
  problems: string[];
}

/**
 * The index sync's spot checks (INDEX_SPOT_CHECKS a run): does a miner serve what its fresh
 * index claims? Each check fetches one random bucket of the index and checks it against the
 * index's claim (NetworkService.spotCheckBucket), which moves the miner's credibility.
 */
@Injectable()
export class IndexSpotChecks {
  private readonly logger = new Logger(IndexSpotChecks.name);

  constructor(
    private readonly network: NetworkService,
    private readonly budgets: CallBudgets,
    @InjectConfig() private readonly config: AppConfig,
  ) {}

  /**
   * The bucket of a fresh index a spot check would fetch: one at random, sampled by its claimed
   * size, as the subnet's validator samples (a lie that inflates the statistics is where the
   * bytes are, and a liar with a few honest buckets is still checked on its claims); undefined
   * when no bucket claims a byte. A bucket claimed larger than an answer is read whole is
   * checked as it arrives (BucketReader). One pass, no copy (a weighted reservoir of one).
   */
  pick(rows: readonly IndexRow[]): IndexRow | undefined {
    let chosen: IndexRow | undefined;
    let total = 0;
    for (const row of rows) {
      total += row.bytes;
      if (row.bytes > 0 && Math.random() * total < row.bytes) chosen = row;
    }
    return chosen;
  }

  /**
   * Checks the picked buckets of some freshly synced indexes against what the miners serve, all at
   * once.
   */
  async check(synced: SyncedMiner[]): Promise<SpotCheckResult[]> {
    // A check takes the miner's GetDataEntityBucket call (beside a validator on the same
    // hotkey, its only one of the hour): only miners with one left are checked. Matched by uid
    // and hotkey: a uid re-registered during the run is another miner, whose credibility (kept
    // by uid) the old owner's index and answer would move. Called as the metagraph has it now:
    // one applied during the run may have given it another axon.
    const askable = new Map(
      this.network.availableMiners('GetDataEntityBucket').map((miner) => [miner.uid, miner]),
    );
    const left = await this.budgets
      .left(
        synced.map(({ miner }) => miner.hotkey),
        'GetDataEntityBucket',
      )
      .catch(() => new Map<string, { left: number }>());
    const candidates = synced.flatMap(({ miner, bucket }) => {
      const current = askable.get(miner.uid);
      return current?.hotkey === miner.hotkey && (left.get(miner.hotkey)?.left ?? 0) > 0
        ? [{ miner: current, bucket }]
        : [];
    });
    const chosen = shuffle(candidates).slice(0, this.config.network.indexSync.spotChecks);
    const results = await Promise.all(
      chosen.map(async ({ miner, bucket: row }) => {
        const bucket = { source: row.source, label: row.label, timeBucket: row.timeBucket };
        const outcome = await this.network.spotCheckBucket(miner, bucket, row.bytes);
        if (!outcome.ok)
          return outcome.score === null
            ? undefined
            : this.warnOf(miner, {
                score: outcome.score,
                problems: [`bucket not fetched: ${outcome.message}`],
              });
        return this.warnOf(miner, outcome.check);
      }),
    );
    return results.filter((result) => result !== undefined);
  }

  /** The miner's result, its problems warned of, under its uid and hotkey. */
  private warnOf(
    miner: ServingMiner,
    check: { score: number; problems: string[] },
  ): SpotCheckResult {
    if (check.problems.length > 0)
      this.logger.warn(
        minerFields(miner),
        `miner ${miner.uid} spot check: ${check.problems.join('; ')}`,
      );
    return { uid: miner.uid, score: check.score, problems: check.problems };
  }
}

function shuffle<T>(items: T[]): T[] {
  const result = [...items];
  for (let i = result.length - 1; i > 0; i--) {
    const j = Math.floor(Math.random() * (i + 1));
    [result[i], result[j]] = [result[j], result[i]];
  }
  return result;
}
