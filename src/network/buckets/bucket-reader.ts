import { Injectable, Logger } from '@nestjs/common';
import { Clock } from '../../common/clock/clock';
import { AppConfig } from '../../config/app-config';
import { InjectConfig } from '../../config/config.module';
import { CredibilityRecorder } from '../credibility-recorder';
import { BucketCheckResult, checkBucket } from './bucket-check';
import { BucketKey, DataItem } from '../protocol';
import { SourceId } from '../sn13/sources';
import { getDataEntityBucketFields, readEntityList } from '../sn13/messages';
import { CallBudgets } from '../transport/call-budgets';
import {
  failureReasonOf,
  failureScore,
  MinerClient,
  MinerFailureReason,
  MinerTarget,
} from '../transport/miner-client';
import { BucketFetchesRepository, StoredFetch } from './bucket-fetches.repository';

/** A miner holding a bucket, with the label and size its index claims for it. */
export interface BucketHolder extends MinerTarget {
  label: string | null;
  bytes: number;
}

export type FetchOutcome =
  | { ok: true; check: BucketCheckResult; fetched: StoredFetch }
  | { ok: false; reason: MinerFailureReason; message: string };

export type BucketAnswer =
  | {
      status: 'success';
      /** True when answered from an earlier fetch, without calling a miner now. */
      cached: boolean;
      miner: { uid: number; hotkey: string };
      label: string | null;
      claimedBytes: number;
      fetchedAt: Date;
      items: DataItem[];
    }
  | { status: 'error'; message: string };

/** A fetch younger than this answers query_bucket without calling a miner again. */
const FRESH_MS = 60 * 60_000;
/** Holders with budget left that query_bucket asks, one after the other. */
const HOLDERS_TRIED = 3;

/**
 * GetDataEntityBucket, the call miners allow a validator twice an hour: fetches a bucket,
 * checks it against the miner's index claim, moves the miner's credibility and keeps what
 * belongs, so that query_bucket can answer from it instead of spending the miner's budget again.
 */
@Injectable()
export class BucketReader {
  private readonly logger = new Logger(BucketReader.name);

  constructor(
    private readonly client: MinerClient,
    private readonly budgets: CallBudgets,
    private readonly repository: BucketFetchesRepository,
    private readonly credibility: CredibilityRecorder,
    private readonly clock: Clock,
    @InjectConfig() private readonly config: AppConfig,
  ) {}

  async fetch(miner: MinerTarget, bucket: BucketKey, claimedBytes: number): Promise<FetchOutcome> {
    let entities: unknown[];
    try {
      const reply = await this.client.call(
        miner,
        'GetDataEntityBucket',
        getDataEntityBucketFields(bucket),
        this.config.network.bucketFetchTimeoutMs,
      );
      entities = readEntityList(reply.body, 'data_entities');
    } catch (error) {
      const reason = failureReasonOf(error);
      this.credibility.record([{ uid: miner.uid, score: failureScore(reason) }]);
      return { ok: false, reason, message: (error as Error).message };
    }
    const check = checkBucket(bucket, claimedBytes, entities);
    this.credibility.record([{ uid: miner.uid, score: check.score }]);
    const fetched: StoredFetch = {
      label: bucket.label,
      minerUid: miner.uid,
      minerHotkey: miner.hotkey,
      fetchedAt: this.clock.now(),
      claimedBytes,
      items: check.items,
    };
    // Not keeping it (Postgres away) is no fault of the miner's: the answer stands.
    await this.repository
      .save(bucket, fetched)
      .catch((error: Error) => this.logger.warn(`bucket fetch not kept: ${error.message}`));
    return { ok: true, check, fetched };
  }

  /**
   * query_bucket's answer for an hour of a source, from `holders` (most credible first): a
   * fetch younger than an hour if there is one; else a holder with budget left, asked within
   * QUERY_DEADLINE_MS (a slower one finishes in the background and is kept for the next ask);
   * else the newest earlier fetch, however old.
   */
  async read(source: SourceId, timeBucket: number, holders: BucketHolder[]): Promise<BucketAnswer> {
    const labels = [...new Set(holders.map((holder) => holder.label))];
    const stored =
      labels.length > 0 ? await this.repository.newest(source, timeBucket, labels) : undefined;
    if (stored && this.clock.now().getTime() - stored.fetchedAt.getTime() < FRESH_MS)
      return answerFrom(stored, true);

    const callable = holders.filter((holder) =>
      this.client.mayAsk(holder.hotkey, 'GetDataEntityBucket'),
    );
    const left = await this.budgets.left(
      callable.map((holder) => holder.hotkey),
      'GetDataEntityBucket',
    );
    const withBudget = callable.filter((holder) => left.get(holder.hotkey)!.left > 0);
    for (const holder of withBudget.slice(0, HOLDERS_TRIED)) {
      const bucket = { source, label: holder.label, timeBucket };
      const outcome = await withDeadline(
        this.fetch(holder, bucket, holder.bytes),
        this.config.network.queryDeadlineMs,
      );
      if (outcome === 'late') {
        if (stored) return answerFrom(stored, true);
        return {
          status: 'error',
          message: `Miner ${holder.uid} is still sending bucket ${timeBucket}; ask again shortly, it will be answered from what it sent`,
        };
      }
      if (outcome.ok) return answerFrom(outcome.fetched, false);
    }
    if (stored) return answerFrom(stored, true);
    if (withBudget.length === 0 && holders.length > 0) {
      const next = [...left.values()]
        .map((entry) => entry.nextAt?.getTime() ?? Infinity)
        .reduce((a, b) => Math.min(a, b), Infinity);
      const when = Number.isFinite(next) ? ` before ${new Date(next).toISOString()}` : '';
      return {
        status: 'error',
        message: `No miner holding bucket ${timeBucket} may be asked for it${when} (their GetDataEntityBucket budget is used or they refused it), and it was not fetched before`,
      };
    }
    return { status: 'error', message: `No miner holding bucket ${timeBucket} answered` };
  }

  /** Data older than the network's 30-day retention is worth nothing. */
  deleteFetchedBefore(date: Date): Promise<void> {
    return this.repository.deleteFetchedBefore(date);
  }
}

/** `cached`: the fetch was made before this request. */
function answerFrom(stored: StoredFetch, cached: boolean): BucketAnswer {
  return {
    status: 'success',
    cached,
    miner: { uid: stored.minerUid, hotkey: stored.minerHotkey },
    label: stored.label,
    claimedBytes: stored.claimedBytes,
    fetchedAt: stored.fetchedAt,
    items: stored.items,
  };
}

/** The promise's value, or 'late' after `ms` (the promise carries on regardless). */
function withDeadline<T>(promise: Promise<T>, ms: number): Promise<T | 'late'> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<'late'>((resolve) => (timer = setTimeout(() => resolve('late'), ms)));
  return Promise.race([promise, late]).finally(() => clearTimeout(timer));
}
