import { Injectable } from '@nestjs/common';
import { Clock } from '../../common/clock/clock';
import { SingleFlight } from '../../common/single-flight';
import { parseIsoDate } from '../../common/validation/iso-date';
import { LATE, orLate } from '../../common/within';
import { AppConfig } from '../../config/app-config';
import { InjectConfig } from '../../config/config.module';
import { MinerIndexService } from '../index/miner-index.service';
import { MetagraphService } from '../metagraph/metagraph.service';
import { itemKey } from '../item-uri';
import { BucketKey, NetworkQuery } from '../protocol';
import { BudgetLeft, CallBudgets, nextCallAt, QueryPurpose } from '../transport/call-budgets';
import { largestClaimAsked } from '../transport/axon-http';
import { MinerClient } from '../transport/miner-client';
import {
  bucketKeyOf,
  groupHoldings,
  recordBytesOf,
  SelectedBucket,
  selectBuckets,
} from './bucket-selection';
import { CallReport, ContentsFetcher } from './contents-fetcher';
import { BucketToFetch, chooseHolders, PlannedCall, StoredSynapse } from './holder-choice';
import { ItemStore, StoredItem } from './item-store';
import { LiedBuckets } from './lied-buckets';
import { planStoredQuery, StoredQueryPlan } from './query-plan';
import { FetchRound, StoredAnswer, summarize } from './stored-answer';
import { HOUR_MS } from '../../common/clock/durations';

/**
 * Hours of the index read at once while buckets are selected: a first page of a few hours (a
 * store hit of a busy label needs one to a few; each hour read is a row per holder, in the index
 * and in the fetch rows), or of the whole range when it is a day or less (one read instead of
 * two for a day's first fetch), then larger pages; at most MAX_PAGES pages (about 30 days).
 */
const FIRST_PAGE_HOURS = 12;
const WHOLE_RANGE_HOURS = 24;
const HOURS_PER_PAGE = 72;
const MAX_PAGES = 11;
/**
 * Stored items read to find `limit` matching ones: filters the store cannot apply (keywords)
 * are applied to at most this many, newest first (a `partial` query scans the source's newest).
 */
const MAX_SCANNED = 20_000;
const READ_PAGE = 500;

/** What each holder has left, by synapse and hotkey (StoredDataService.budgetsLeft). */
type BudgetsLeft = ReadonlyMap<StoredSynapse, ReadonlyMap<string, BudgetLeft>>;

/**
 * Answers on-demand queries from what miners have stored (docs/decisions.md, "On-demand from
 * stored data"): plans the query's buckets, takes those the store holds fresh, fetches the
 * newest missing ones from their holders (checked, kept in the shared item store), and at
 * QUERY_DEADLINE_MS answers from the store with what arrived; later deliveries still land there.
 */
@Injectable()
export class StoredDataService {
  /** Buckets being fetched by this process, so that concurrent queries do not fetch twice. */
  private readonly inFlight = new SingleFlight<string, boolean>();

  constructor(
    private readonly index: MinerIndexService,
    private readonly store: ItemStore,
    private readonly fetcher: ContentsFetcher,
    private readonly client: MinerClient,
    private readonly budgets: CallBudgets,
    private readonly lies: LiedBuckets,
    private readonly clock: Clock,
    @InjectConfig() private readonly config: AppConfig,
    private readonly metagraph: MetagraphService,
  ) {}

  /**
   * `purpose`: a task's query's calls leave users their reserve of each budget. `deadlineMs`:
   * how long the answer may wait for its fetches (what is left of the query's deadline); fetches
   * still running then go on, and their items are stored for the next query.
   */
  async answer(
    query: NetworkQuery,
    purpose: QueryPurpose = 'user',
    deadlineMs = this.config.network.queryDeadlineMs,
  ): Promise<StoredAnswer> {
    const deadlineAt = performance.now() + deadlineMs;
    const plan = planStoredQuery(query, this.clock.now());
    const { selected, cutShort } = await this.selectBuckets(plan);
    // No bucket of the labels: none held, or no index loaded to say who holds them.
    const indexLoaded =
      plan.labels.length === 0 || selected.length > 0 || (await this.index.anyIndexLoaded());
    const missing = selected.filter((bucket) => !bucket.fromStore);
    const fetch = await this.fetch(missing, purpose);
    const deadlineReached =
      (await orLate(fetch.done, Math.max(0, deadlineAt - performance.now()))) === LATE;
    const {
      items: stored,
      pastChosen,
      cut,
    } = plan.from <= plan.to
      ? await this.read(plan, selected)
      : { items: [], pastChosen: false, cut: false };
    // The chosen hours fell short of `limit` while older held hours were left unplanned: what
    // the read found past them skips those hours, so the answer is not the newest matches.
    const unplannedSkipped = cutShort && pastChosen;
    const answer = summarize(plan, selected, fetch, stored, {
      deadlineReached,
      indexLoaded,
      unplannedSkipped,
      readCut: cut,
      coldkeys: this.metagraph.coldkeysByHotkey(),
      maxBytesPerCall: this.maxBytesPerCall(),
    });
    // No holder was asked, and not for any of the reasons summarize can tell. The public
    // words: the detail names the metagraph's file or node (system-status').
    const calls = this.metagraph.minerCalls();
    return !calls.allowed && answer.error !== undefined
      ? { ...answer, error: `No miners available: ${calls.why}` }
      : answer;
  }

  /**
   * The plan's buckets, newest first, as many as the index says `target` items need.
   * `cutShort`: the estimate was met before the range was, so older hours of it that hold
   * the labels may not be among them.
   */
  private async selectBuckets(
    plan: StoredQueryPlan,
  ): Promise<{ selected: SelectedBucket[]; cutShort: boolean }> {
    if (plan.labels.length === 0) return { selected: [], cutShort: false };
    const now = this.clock.now();
    const selected: SelectedBucket[] = [];
    let wanted = plan.target;
    let to = plan.toBucket;
    const rangeHours = plan.toBucket - plan.fromBucket + 1;
    const firstPage = rangeHours <= WHOLE_RANGE_HOURS ? rangeHours : FIRST_PAGE_HOURS;
    for (let page = 0; page < MAX_PAGES && wanted > 0 && to >= plan.fromBucket; page++) {
      // A page of the whole range needs the fetch rows of the whole range: read at once.
      const whole = page === 0 && firstPage === rangeHours;
      const [rows, wholeFetches] = await Promise.all([
        this.index.holdings(
          plan.sourceId,
          plan.labels,
          plan.fromBucket,
          to,
          page === 0 ? firstPage : HOURS_PER_PAGE,
        ),
        whole ? this.store.fetches(plan.sourceId, plan.labels, plan.fromBucket, to) : undefined,
      ]);
      if (rows.length === 0) break;
      const oldest = rows[rows.length - 1].timeBucket;
      const fetches =
        wholeFetches ?? (await this.store.fetches(plan.sourceId, plan.labels, oldest, to));
      const chosen = selectBuckets(groupHoldings(plan.sourceId, rows), fetches, {
        now,
        currentHourTtlMs: this.config.network.storedCurrentHourTtlMs,
        recordBytes: recordBytesOf(fetches),
        target: wanted,
        maxClaimBytes: this.maxBytesPerCall(),
      });
      selected.push(...chosen.selected);
      wanted -= chosen.estimatedItems;
      to = oldest - 1;
    }
    return { selected, cutShort: wanted <= 0 };
  }

  /**
   * Calls the holders of the missing buckets (a bucket another query of this process is
   * fetching is awaited instead); `done` settles when every call has.
   */
  private async fetch(
    missing: readonly SelectedBucket[],
    purpose: QueryPurpose,
  ): Promise<FetchRound> {
    const reports = new Map<PlannedCall, CallReport>();
    const delivered = new Map<string, boolean>();
    const waits: Promise<unknown>[] = [];
    const wanted: BucketToFetch[] = [];
    // Claimed before the first await, so that a concurrent query joins them: each claimed
    // bucket's run is settled below, once this round's calls are chosen.
    const claimed = new Map<string, (delivered: Promise<boolean>) => void>();
    for (const selected of missing) {
      const key = bucketKeyOf(selected.bucket);
      const outcome = this.inFlight.run(key, () => {
        wanted.push({ bucket: selected.bucket, holders: this.callable(selected) });
        return new Promise<boolean>((resolve) => claimed.set(key, resolve));
      });
      waits.push(outcome.then((ok) => delivered.set(key, ok)));
    }
    let calls: PlannedCall[] = [];
    let firstCallAt: Date | undefined;
    try {
      const budgets = await this.budgetsLeft(wanted, purpose);
      calls = chooseHolders(wanted, {
        callsLeft: (hotkey, synapse) => budgets.get(synapse)?.get(hotkey)?.left ?? 0,
        maxCalls: 2 * this.config.network.minersPerQuery,
        maxBytesPerCall: this.maxBytesPerCall(),
        corroborate: true,
      }).calls;
      if (calls.length === 0) firstCallAt = firstCallOf(wanted, budgets);
    } finally {
      const runs = calls.map((call) =>
        this.fetcher.run(call, purpose).then((report) => reports.set(call, report).get(call)!),
      );
      for (const [key, settle] of claimed) {
        const its = runs.filter((_, index) =>
          calls[index].buckets.some((asked) => bucketKeyOf(asked.bucket) === key),
        );
        settle(Promise.all(its).then((done) => done.some((report) => report.delivered.has(key))));
      }
      waits.push(...runs);
    }
    const done = Promise.all(waits).then(() => undefined);
    return { calls, reports, delivered, done, firstCallAt };
  }

  /** The largest claim one call may carry: a holder claiming more is never asked. */
  private maxBytesPerCall(): number {
    return largestClaimAsked(this.config.network.minerMaxResponseBytes);
  }

  /**
   * Holders the client may call now for the bucket's synapse, less those whose last delivery of
   * it, within the hour, the checks dropped whole (LiedBuckets). None while miners may not be
   * called (MetagraphService.minerCalls): the index lists the stored metagraph's miners.
   */
  private callable(selected: SelectedBucket) {
    if (!this.metagraph.minerCalls().allowed) return [];
    const synapse = synapseOf(selected.bucket);
    return selected.toAsk.filter(
      (holder) =>
        !this.client.isCircuitOpen(holder) &&
        this.client.mayAsk(holder.hotkey, synapse) &&
        !this.lies.lied(holder.hotkey, selected.bucket),
    );
  }

  /**
   * What each holder has left of its budget, by synapse, read once for the whole round: only
   * for the synapses the wanted buckets need, both at once (the round's calls wait for them).
   */
  private async budgetsLeft(
    wanted: readonly BucketToFetch[],
    purpose: QueryPurpose,
  ): Promise<BudgetsLeft> {
    const hotkeys = [...new Set(wanted.flatMap((entry) => entry.holders.map((h) => h.hotkey)))];
    const synapses = [...new Set(wanted.map((entry) => synapseOf(entry.bucket)))];
    return new Map(
      hotkeys.length === 0
        ? []
        : await Promise.all(
            synapses.map(
              async (synapse) =>
                [synapse, await this.budgets.left(hotkeys, synapse, purpose)] as const,
            ),
          ),
    );
  }

  /**
   * The answer: matching stored items, newest first, until `limit` or the store runs out. The
   * hours the selection chose (newest first, as many as the plan's target needs) are read first,
   * so that Postgres plans and reads only their days' partitions (a query without dates spans
   * 31); when they do not give `limit` items, later pages read the rest of the range, older
   * than what was read. The first page is as large as the plan's target (the limit, unless filters
   * the store cannot apply thin the items out): a store hit reads little more than it returns.
   */
  private async read(
    plan: StoredQueryPlan,
    selected: readonly SelectedBucket[],
  ): Promise<{ items: StoredItem[]; pastChosen: boolean; cut: boolean }> {
    const kept: StoredItem[] = [];
    // One item per post: the store keeps one row per uri as the record spells it, and two
    // copies of a post may spell it two ways (an X handle's case, a Reddit uri with or without
    // the title's slug).
    const posts = new Set<string>();
    const chosenFrom =
      selected.length === 0
        ? plan.from
        : new Date(Math.min(...selected.map((chosen) => chosen.bucket.timeBucket)) * HOUR_MS);
    let from = chosenFrom > plan.from ? chosenFrom : plan.from;
    let before: { datetime: Date; uri: string } | undefined;
    /** True once the chosen hours gave fewer than `limit` items and older ones were read. */
    let pastChosen = false;
    /** True once the store cut a read at its bound on rows: the answer is partial. */
    let readCut = false;
    for (let scanned = 0; kept.length < plan.limit && scanned < MAX_SCANNED;) {
      const pageSize = before ? READ_PAGE : Math.min(READ_PAGE, plan.target);
      const { items: page, cut } = await this.store.findPage({
        source: plan.sourceId,
        labels: plan.readLabels,
        from,
        to: plan.to,
        usernames: plan.usernames,
        before,
        limit: pageSize,
      });
      scanned += page.length;
      for (const stored of page) {
        if (kept.length === plan.limit || !plan.matches(stored.item)) continue;
        const post = itemKey(stored.item);
        if (posts.has(post)) continue;
        posts.add(post);
        kept.push(stored);
      }
      // Cut at the store's bound: read again from here, the same copies would be read again.
      if (cut) {
        readCut = true;
        break;
      }
      const last = page.at(-1)?.item;
      if (last) before = { datetime: parseIsoDate(last.datetime)!, uri: last.uri };
      if (page.length < pageSize && from === plan.from) break;
      // Past the first page, the rest of the range: older than what was read.
      before ??= { datetime: from, uri: '' };
      if (kept.length < plan.limit && from > plan.from) pastChosen = true;
      from = plan.from;
    }
    return { items: kept, pastChosen, cut: readCut };
  }
}

function synapseOf(bucket: BucketKey): StoredSynapse {
  return bucket.label === null ? 'GetDataEntityBucket' : 'GetContentsByBuckets';
}

/**
 * When the first call of a wanted bucket's holders with no call left frees up (undefined when
 * none of them is out of calls, or none will have one again).
 */
function firstCallOf(wanted: readonly BucketToFetch[], budgets: BudgetsLeft): Date | undefined {
  return nextCallAt(
    wanted.flatMap((entry) =>
      entry.holders
        .map((holder) => budgets.get(synapseOf(entry.bucket))?.get(holder.hotkey))
        .filter((left): left is BudgetLeft => left !== undefined && left.left <= 0),
    ),
  );
}
