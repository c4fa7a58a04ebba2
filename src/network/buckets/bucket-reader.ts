import { Injectable, Logger } from '@nestjs/common';
import { Clock } from '../../common/clock/clock';
import { withUnprintablesEscaped } from '../../common/validation/control-characters';
import { LATE, orLate } from '../../common/within';
import { AppConfig } from '../../config/app-config';
import { InjectConfig } from '../../config/config.module';
import { isDroppedWhole } from '../answer-checks';
import { CredibilityRecorder } from '../credibility-recorder';
import { BucketTally, worthReading } from './bucket-check';
import { answerFrom, BucketAnswer, FetchOutcome, newestFirst } from './bucket-outcomes';
import { BucketKey, bucketEnd, bucketStart } from '../protocol';
import { SourceId } from '../sources';
import { readEntitiesAsTheyArrive } from '../sn13/entity-stream';
import { getDataEntityBucketFields, readEntityList } from '../sn13/messages';
import { BucketDelivery, BucketFetch, ItemStore } from '../stored/item-store';
import { LiedBuckets } from '../stored/lied-buckets';
import { largestAnswerFor, largestClaimAsked } from '../transport/axon-http';
import { CallBudgets, CallPurpose, nextCallAt } from '../transport/call-budgets';
import { MinerClient } from '../transport/miner-client';
import { AnswerStream, MinerTarget } from '../transport/miner-reply';
import {
  failureReasonOf,
  failureScore,
  isBudgetSpent,
  refusedWhenSent,
  KeptForChecksError,
} from '../transport/miner-failures';

/** A miner holding a bucket, with the label and size its index claims for it. */
export interface BucketHolder extends MinerTarget {
  label: string | null;
  bytes: number;
}

/** A fetch younger than this answers query_bucket without calling a miner again. */
const FRESH_MS = 60 * 60_000;
/** Holders with budget left that query_bucket asks, one after the other. */
const HOLDERS_TRIED = 3;
/**
 * The most credible holders of a bucket query_bucket reads from the index before it filters
 * them by size, refusals and budget: the subnet's 256 uids, so every holder in practice (a
 * bound, not a cut: an index lookup and one budget read of that many hotkeys). Cut to the top
 * few before the budgets, a popular label's holders with a call left went unasked once the most
 * credible had spent theirs.
 */
export const HOLDERS_CONSIDERED = 256;
/** A miner sends at most this many entities for a bucket: all of a stored bucket fits. */
const BUCKET_ITEMS_LIMIT = 200_000;

/**
 * GetDataEntityBucket, the call miners allow a validator twice an hour: fetches a bucket,
 * checks it against the miner's index claim, moves the miner's credibility and keeps what
 * belongs in the item store, so that query_bucket (and the on-demand queries) can answer from it
 * instead of spending the miner's budget again.
 */
@Injectable()
export class BucketReader {
  private readonly logger = new Logger(BucketReader.name);

  constructor(
    private readonly client: MinerClient,
    private readonly budgets: CallBudgets,
    private readonly store: ItemStore,
    private readonly lies: LiedBuckets,
    private readonly credibility: CredibilityRecorder,
    private readonly clock: Clock,
    @InjectConfig() private readonly config: AppConfig,
  ) {}

  /** `purpose`: a user's (query_bucket) or the spot checks' ('check') fetch (CallBudgets). */
  async fetch(
    miner: MinerTarget,
    bucket: BucketKey,
    claimedBytes: number,
    purpose: CallPurpose = 'user',
  ): Promise<FetchOutcome> {
    // A claim larger than an answer read whole may carry (only a spot check asks for one: the
    // statistics count it, and it can be a lie no check could catch otherwise) is checked as it
    // arrives, within a cap of its own; its entities are counted, not kept.
    const whole = claimedBytes <= largestClaimAsked(this.config.network.minerMaxResponseBytes);
    const tally = new BucketTally(bucket, claimedBytes, whole);
    const stream: AnswerStream | undefined = whole
      ? undefined
      : {
          maxBytes: largestAnswerFor(claimedBytes),
          read: (chunks) =>
            readEntitiesAsTheyArrive(worthReading(chunks, tally), (entity) => tally.add(entity)),
        };
    try {
      const reply = await this.client.call(
        miner,
        'GetDataEntityBucket',
        getDataEntityBucketFields(bucket),
        this.config.network.bucketFetchTimeoutMs,
        purpose,
        stream,
      );
      if (whole)
        for (const entity of reply.read((body) => readEntityList(body, 'data_entities')))
          tally.add(entity);
    } catch (error) {
      const reason = failureReasonOf(error);
      const score = failureScore(reason);
      this.credibility.record([{ uid: miner.uid, hotkey: miner.hotkey, score }]);
      const message = (error as Error).message;
      const refused = refusedWhenSent(error);
      if (error instanceof KeptForChecksError)
        return {
          ok: false,
          reason,
          message,
          score,
          refused,
          budgetSpent: false,
          keptForChecks: { freeAt: error.freeAt },
        };
      return { ok: false, reason, message, score, refused, budgetSpent: isBudgetSpent(error) };
    }
    const check = tally.result();
    this.credibility.record([{ uid: miner.uid, hotkey: miner.hotkey, score: check.score }]);
    const delivery: BucketDelivery = {
      bucket,
      minerUid: miner.uid,
      minerHotkey: miner.hotkey,
      fetchedAt: this.clock.now(),
      claimedBytes,
      items: check.items,
    };
    const returned = tally.added;
    const droppedWhole = isDroppedWhole({ returned, dropped: returned - tally.belonging });
    // Kept, a delivery whose every entity failed the checks answered query_bucket "no items"
    // for an hour when its miner had only lied (a review's finding, as contents-check.ts's
    // deliveriesToKeep for GetContentsByBuckets).
    if (droppedWhole) {
      // Not asked for it again within the hour (LiedBuckets), by query_bucket or the stored path.
      this.lies.record(miner.hotkey, bucket);
      return { ok: true, check, delivery, droppedWhole };
    }
    // Its entities were counted, not kept: saved, the fetch would answer query_bucket with none.
    if (!whole) return { ok: true, check, delivery, droppedWhole };
    // Not keeping it (Postgres away) is no fault of the miner's: the answer stands.
    await this.store
      .save(delivery)
      .catch((error: Error) => this.logger.warn(`bucket fetch not kept: ${error.message}`));
    return { ok: true, check, delivery, droppedWhole };
  }

  /**
   * query_bucket's answer for an hour of a source, from `holders` (most credible first): the
   * stored items of the bucket's newest fetch if it is younger than an hour; else a holder with
   * budget left whose claim an honest answer can carry (largestClaimAsked) and whose delivery of
   * the bucket was not dropped whole within the hour (LiedBuckets), asked within
   * QUERY_DEADLINE_MS (a slower one finishes in the background and is kept for the next ask), up
   * to HOLDERS_TRIED of them; a miner's last call only while the spot checks keep their share of
   * the network (CallBudgets refuses it otherwise, and the holders with only a last call left
   * are skipped from then on); else the newest earlier fetch, however old. An answer from the
   * store holds every stored item of the bucket, whichever miner delivered it.
   */
  async read(
    source: SourceId,
    timeBucket: number,
    holders: BucketHolder[],
    /** The labels its earlier fetches are looked up under: the holders' (others when none may be asked). */
    storedLabels: readonly (string | null)[] = holders.map((holder) => holder.label),
  ): Promise<BucketAnswer> {
    // Up to HOLDERS_CONSIDERED are read: the answers say so when there may be more.
    const allRead = holders.length < HOLDERS_CONSIDERED;
    const labels = [...new Set(storedLabels)];
    const [stored] =
      labels.length > 0
        ? (await this.store.fetches(source, labels, timeBucket, timeBucket)).sort(
            (a, b) => b.fetchedAt.getTime() - a.fetchedAt.getTime(),
          )
        : [];
    if (stored && this.clock.now().getTime() - stored.fetchedAt.getTime() < FRESH_MS)
      return this.answerFromStore(stored);

    // An honest answer for a larger claim would pass the answer cap: `oversize`, credibility 0
    // and the miner's call of the hour spent for nothing (only the spot checks ask for one,
    // read as it arrives, and they keep none of it to answer from).
    const largest = largestClaimAsked(this.config.network.minerMaxResponseBytes);
    const fitting = holders.filter((holder) => holder.bytes <= largest);
    const callable = fitting.filter(
      (holder) =>
        this.client.mayAsk(holder.hotkey, 'GetDataEntityBucket') &&
        !this.lies.lied(holder.hotkey, { source, label: holder.label, timeBucket }),
    );
    const left = await this.budgets.left(
      callable.map((holder) => holder.hotkey),
      'GetDataEntityBucket',
    );
    const withBudget = callable.filter((holder) => left.get(holder.hotkey)!.left > 0);
    let tried = 0;
    let lied = 0;
    /** Holders whose last calls other requests spent between the read of `left` and their turn. */
    let spentMeanwhile = 0;
    let kept: { freeAt: Date | null } | undefined;
    // Holders that refused the fetch (403, 404, 401, 503): scored 0 once another holder answers,
    // as a spot check refused beside an answered one is (IndexSpotChecks). Scoring nothing, a
    // liar refused users' fetches at no cost, and its refusal (spending its budget, or starting
    // a cooldown) kept it off the spot checks of the hour (a hostile-miner audit's finding).
    const refused: BucketHolder[] = [];
    const answered = () => {
      if (refused.length === 0) return;
      this.credibility.record(refused.map(({ uid, hotkey }) => ({ uid, hotkey, score: 0 })));
    };
    for (const holder of withBudget) {
      if (tried === HOLDERS_TRIED) break;
      if (kept && left.get(holder.hotkey)!.left === 1) continue;
      const bucket = { source, label: holder.label, timeBucket };
      const outcome = await orLate(
        this.fetch(holder, bucket, holder.bytes),
        this.config.network.queryDeadlineMs,
      );
      if (outcome === LATE) {
        if (stored) return this.answerFromStore(stored);
        return {
          status: 'error',
          message: `Miner ${holder.uid} is still sending bucket ${timeBucket}; ask again shortly, it will be answered from what it sent`,
        };
      }
      if (outcome.ok) answered();
      if (outcome.ok && !outcome.droppedWhole)
        return answerFrom(outcome.delivery, newestFirst(outcome.delivery), false);
      if (outcome.ok) {
        lied += 1;
        refused.length = 0;
      }
      if (!outcome.ok && outcome.refused) refused.push(holder);
      // Not asked after all: no call was made, and the next holder may have one (counted among
      // HOLDERS_TRIED, it ended the fetch with "no miner answered": a scale audit's finding).
      if (!outcome.ok && outcome.keptForChecks) kept = outcome.keptForChecks;
      else if (!outcome.ok && outcome.budgetSpent) spentMeanwhile += 1;
      else tried += 1;
    }
    if (stored) return this.answerFromStore(stored);
    if (fitting.length === 0 && holders.length > 0) {
      const [best] = holders;
      return {
        status: 'error',
        message:
          `Bucket ${timeBucket} is in the index (its most credible holder, miner ${best.uid}, claims ${best.bytes} bytes under ${shownLabel(best.label)}), ` +
          `but ${allRead ? 'every holder' : `each of its ${holders.length} most credible holders`} claims more than a miner is asked to send at once (${largest} bytes, half of MINER_MAX_RESPONSE_BYTES), ` +
          'and it was not fetched before; ask for another label or hour',
      };
    }
    if (withBudget.length === 0 && fitting.length > 0) {
      const next = nextCallAt(callable.map((holder) => left.get(holder.hotkey)!));
      const when = next ? ` before ${next.toISOString()}` : '';
      return {
        status: 'error',
        message: `${allRead ? 'No miner' : `None of the ${holders.length} most credible miners`} holding bucket ${timeBucket} may be asked for it${when} (their GetDataEntityBucket budget is used, they refused it, or they sent only entities that failed the checks within the hour), and it was not fetched before`,
      };
    }
    if (kept && tried === 0 && fitting.length > 0) {
      const [best] = fitting;
      const next = kept.freeAt;
      return {
        status: 'error',
        message:
          `Bucket ${timeBucket} is in the index (its most credible holder, miner ${best.uid}, claims ${best.bytes} bytes under ${shownLabel(best.label)}), ` +
          "but its items cannot be fetched now: the miners' GetDataEntityBucket calls left are kept for the index spot checks, " +
          `and it was not fetched before; ask again ${next ? `after ${next.toISOString()}` : 'later'}`,
      };
    }
    if (tried === 0 && spentMeanwhile > 0 && !kept)
      return {
        status: 'error',
        message: `No miner holding bucket ${timeBucket} may be asked for it now: other requests of this gateway spent the GetDataEntityBucket calls left to its ${spentMeanwhile} holders with budget before this one's turn, and it was not fetched before; ask again later`,
      };
    if (lied > 0)
      return {
        status: 'error',
        message: `No miner holding bucket ${timeBucket} answered with its items: ${lied} of the ${tried} asked sent only entities that failed the checks (not of the bucket's hour, source or label, or malformed)`,
      };
    return { status: 'error', message: `No miner holding bucket ${timeBucket} answered` };
  }

  /** Data older than the network's 30-day retention is worth nothing; the days dropped. */
  deleteFetchedBefore(date: Date): Promise<number> {
    return this.store.deleteBefore(date);
  }

  /** The stored items of the fetched bucket, newest first, as fetched before this request. */
  private async answerFromStore(fetch: BucketFetch): Promise<BucketAnswer> {
    const { bucket } = fetch;
    const stored = await this.store.find({
      source: bucket.source,
      labels: [bucket.label],
      from: bucketStart(bucket.timeBucket),
      to: new Date(bucketEnd(bucket.timeBucket).getTime() - 1),
      usernames: [],
      limit: BUCKET_ITEMS_LIMIT,
    });
    return answerFrom(
      fetch,
      stored.map(({ item }) => item),
      true,
    );
  }
}

/**
 * A miner's label as a message quotes it: escaped as every quote of a label is (a miner's index
 * may file a bucket under `\u001b[2J` or `\u202e…`, shown raw by a client printing the detail).
 */
function shownLabel(label: string | null): string {
  return label === null ? 'no label' : withUnprintablesEscaped(label);
}
