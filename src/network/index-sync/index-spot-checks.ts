import { Injectable, Logger } from '@nestjs/common';
import { minerFields } from '../../common/logging/miner-fields';
import { AppConfig } from '../../config/app-config';
import { InjectConfig } from '../../config/config.module';
import { IndexRow } from '../index/compressed-index';
import { MinerIndexService } from '../index/miner-index.service';
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
  /** The bytes its fresh index claims in all. */
  claimed: number;
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
    private readonly index: MinerIndexService,
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
   * Spot-checks INDEX_SPOT_CHECKS miners with a GetDataEntityBucket call left, all at once: among
   * those synced this run (on the bucket picked from their fresh index) and those holding an index
   * stored before (on one sampled from it: a miner that refused its index call after one sync,
   * or whose call a validator beside us took, was never checked again, and its claims counted for
   * good). Half the checks (rounded up) go to miners sampled by their claimed bytes, the rest to
   * miners at random: chosen uniformly, a 100× liar among 256 miners was checked about once in 50
   * hours, and ten failed checks apart before it stopped dominating a label (a statistics audit's
   * finding).
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
    const fresh = synced.flatMap(({ miner, bucket, claimed }) => {
      const current = askable.get(miner.uid);
      return current?.hotkey === miner.hotkey ? [{ miner: current, bucket, claimed }] : [];
    });
    const freshUids = new Set(synced.map(({ miner }) => miner.uid));
    const others = [...askable.values()].filter((miner) => !freshUids.has(miner.uid));
    const held = await this.index
      .claimedBytes(others.map((miner) => miner.uid))
      .catch(this.unread("the stored indexes' claims", new Map<number, number>()));
    const stored = others.flatMap((miner) => {
      const claimed = held.get(miner.uid);
      return claimed ? [{ miner, bucket: undefined, claimed }] : [];
    });
    const all = [...fresh, ...stored];
    const left = await this.budgets
      .left(
        all.map(({ miner }) => miner.hotkey),
        'GetDataEntityBucket',
      )
      .catch(this.unread('the call budgets', new Map<string, { left: number }>()));
    const candidates = all.filter(({ miner }) => (left.get(miner.hotkey)?.left ?? 0) > 0);
    const chosen = chooseForChecks(candidates, this.config.network.indexSync.spotChecks);
    const checked = await Promise.all(
      chosen.map(async ({ miner, bucket }) => {
        const row =
          bucket ??
          (await this.index
            .sampleBucket(miner.uid)
            .catch(this.unread(`a bucket of miner ${miner.uid}'s stored index`, undefined)));
        if (!row) return undefined;
        const key = { source: row.source, label: row.label, timeBucket: row.timeBucket };
        return { miner, outcome: await this.network.spotCheckBucket(miner, key, row.bytes) };
      }),
    );
    const done = checked.filter((check) => check !== undefined);
    // A check refused (403, 404, 401, 503) while others of the run were answered: who we are and
    // our signature served those, so the refusal is the miner's, and scores 0, as the subnet's
    // validator scores any failed bucket fetch ("the miner could just not respond to queries
    // for data entity buckets it doesn't have"). Scoring nothing, a miner refusing every check
    // kept the credibility its claims are weighted by: an index claiming 128 MiB in each of 701
    // hours held a label's adjusted bytes at 25,000 times the honest total (a statistics audit),
    // and then a 503, a 401 or a 403 "not a validator" of its own writing still did (a
    // hostile-miner audit). A run whose every check was refused scores none: that is ours.
    const answered = done.some(({ outcome }) => outcome.ok);
    const refused = done.filter(({ outcome }) => !outcome.ok && outcome.refused && answered);
    if (refused.length > 0) this.network.recordRefusedChecks(refused.map(({ miner }) => miner));
    return done.flatMap(({ miner, outcome }) => {
      if (outcome.ok) return [this.warnOf(miner, outcome.check)];
      const score = outcome.refused && answered ? 0 : outcome.score;
      if (score === null) return [];
      return [this.warnOf(miner, { score, problems: [`bucket not fetched: ${outcome.message}`] })];
    });
  }

  /**
   * What a read the checks cannot do without (Postgres failing) answers: fewer checks, or none,
   * and a warning. A run that silently checked no one read as "checked, nothing wrong" in the
   * sync's line (an error-paths audit).
   */
  private unread<T>(what: string, fallback: T): (error: unknown) => T {
    return (error) => {
      this.logger.warn(
        { err: error },
        `spot checks: ${what} not read; fewer miners checked this run`,
      );
      return fallback;
    };
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

/**
 * `count` of the candidates: half of them (rounded up) sampled by their claimed bytes (the
 * smallest exponential keys, -ln(u)/bytes: a weighted sample without replacement), the rest at
 * random among the others, so that a miner claiming little is still checked now and then.
 */
export function chooseForChecks<T extends { claimed: number }>(
  candidates: T[],
  count: number,
): T[] {
  const byClaim = Math.ceil(count / 2);
  const keyed = candidates
    .map((candidate) => ({
      candidate,
      key: -Math.log(1 - Math.random()) / Math.max(1, candidate.claimed),
    }))
    .sort((a, b) => a.key - b.key)
    .map(({ candidate }) => candidate);
  const weighted = keyed.slice(0, byClaim);
  return [...weighted, ...shuffle(keyed.slice(byClaim)).slice(0, count - weighted.length)];
}

function shuffle<T>(items: T[]): T[] {
  const result = [...items];
  for (let i = result.length - 1; i > 0; i--) {
    const j = Math.floor(Math.random() * (i + 1));
    [result[i], result[j]] = [result[j], result[i]];
  }
  return result;
}
