import { Logger } from '@nestjs/common';
import { Clock } from '../../common/clock/clock';
import { inPool } from '../../common/jobs/in-pool';
import { CollectionOutcome } from '../../common/metrics/metric-labels';
import { MetricsService } from '../../common/metrics/metrics.service';
import { plural } from '../../common/plural';
import { parseIsoDate } from '../../common/validation/iso-date';
import { AppConfig } from '../../config/app-config';
import { NetworkService } from '../../network/network.service';
import { QueryFailures } from '../../network/query-failures';
import { NetworkQueryResult } from '../../network/query-result';
import { afterPage, finalPage, nextPage, progressOf, progressWithin } from './collection-paging';
import { TaskRow } from './task.types';
import { TaskLifecycleRepository } from './task-lifecycle.repository';

/**
 * A task's collections while it is `active`: every TASK_COLLECT_INTERVAL, the matching data
 * asked of the miners through the network's on-demand machinery (same checks, dedupe by uri), one
 * page of its post window at a time (collection-paging.ts); then, once expired, its final
 * collection of what is new up to expiry (a page, and pages back while they are full) before its
 * compile. Run by TaskLifecycleService's pass.
 */
export class TaskCollector {
  constructor(
    private readonly repository: TaskLifecycleRepository,
    private readonly network: NetworkService,
    private readonly clock: Clock,
    private readonly config: AppConfig,
    private readonly logger: Logger,
    /** Whether the service is shutting down: its pass then starts no more collections. */
    private readonly stopping: () => boolean,
    /** Each collection by outcome: gateway_task_collections_total. */
    private readonly metrics: MetricsService,
  ) {}

  /**
   * Collects the due tasks the budget allows, heaviest first: a tick's worth of
   * TASK_COLLECT_PER_MINUTE (one pass runs at a time across replicas), at most
   * TASK_COLLECT_CONCURRENCY at once. Collections share the miners with users' queries; bounded
   * so, they never flood them. Due tasks left over wait for the next pass, and show as behind
   * once a whole interval passed without a collection. (The pass is not spread over the tick:
   * the job runs again only once a tick passed since the last pass ended.)
   */
  async collectDue(budget = this.passBudget()): Promise<number> {
    const { collectIntervalMs, collectConcurrency, tickMs } = this.config.tasks;
    const now = this.clock.now();
    // A failed collection is tried again a tick later, then after 2, 4, … ticks (at most an
    // interval): tried at every tick, it went ahead of the tasks that could be collected and
    // spent their share of the miners' calls.
    const due = await this.repository.dueForCollection(now, collectIntervalMs, tickMs, budget);
    await inPool(
      due,
      collectConcurrency,
      () => this.stopping(),
      (task) =>
        this.collect(task, now).then(
          (outcome) => this.metrics.recordTaskCollection(outcome),
          async (error: Error) => {
            this.metrics.recordTaskCollection('failed');
            this.logger.warn(
              { task_id: task.id },
              `task ${task.id}: collection failed: ${error.message}`,
            );
            await this.repository.recordCollectionFailure(task.id, now).catch(() => undefined);
          },
        ),
    );
    return due.length;
  }

  /** Collections one pass may start: a tick's worth of TASK_COLLECT_PER_MINUTE. */
  private passBudget(): number {
    const { collectPerMinute, tickMs } = this.config.tasks;
    return Math.max(1, Math.floor((collectPerMinute * tickMs) / 60_000));
  }

  /** One collection; how it ended, unless it threw (`failed`). */
  private async collect(task: TaskRow, now: Date): Promise<CollectionOutcome> {
    const progress = progressWithin(task, progressOf(task));
    // Expired: its final collection, what is new up to expiry and the pages back through it
    // (dueForCollection).
    const page = task.expires_at <= now ? finalPage(task, progress) : nextPage(task, progress, now);
    // A window yet to begin, or nothing left before expiry (dueForCollection leaves such tasks
    // out): nothing to ask for.
    if (!page) return 'skipped';
    const { collectLimit } = this.config.tasks;
    const result = await this.network.query(
      {
        source: task.platform,
        usernames: [],
        keywords: [task.label, task.keyword].filter(
          (keyword): keyword is string => keyword !== null,
        ),
        keywordMode: 'all',
        startDate: page.start,
        endDate: page.end,
        limit: collectLimit,
        newestFirst: true,
      },
      'task',
    );
    // Cut short by shutdown (the miner client abandoned calls): not the task's failure, which
    // would put its next collection off by a tick; nor a collection, though some miners
    // answered: saved, its page would count as asked of every miner, the abandoned ones' posts
    // never asked for again (a shutdown audit's finding). Left due, it is asked again whole.
    if (this.stopping() && (result.error || (result.minersFailed.reasons.shutdown ?? 0) > 0))
      return 'shutdown';
    if (result.error) {
      // The failures by reason, as fields and briefly in the message: "every queried miner
      // failed" alone did not tell open circuits from timeouts or spent budgets (an audit's).
      // And the miners left out for budget: the healthy ones may all be, when users spent their
      // part (docs/decisions.md, "Miners left out for budget are counted").
      const failed = result.minersFailed.reasons;
      const withoutBudget = result.minersWithoutBudget;
      this.logger.warn(
        { task_id: task.id, miners_failed: failed, miners_without_budget: withoutBudget },
        `task ${task.id}: nothing collected: ${result.error}${failuresInBrief(failed)}` +
          leftOutForBudget(withoutBudget),
      );
      await this.repository.recordCollectionFailure(task.id, now);
      return 'nothing_collected';
    }
    const outcome = {
      // A miner that sent the limit may hold more, though the checks dropped some of what it
      // sent: judged on the checked items alone, paging back stopped early (an audit's finding).
      full: result.items.length >= collectLimit || result.limitReached === true,
      completeFrom: completeFrom(result),
    };
    const { added, outsideWindow } = await this.repository.addItems(
      task.id,
      result.items,
      afterPage(progress, page, outcome),
      now,
    );
    // A pass that found nothing new is the quiet, common case of a task on a slow label: one info
    // line per active task an hour said nothing an operator acts on (an audit's finding). It is
    // counted in gateway_task_collections_total{outcome="nothing_new"} and written at debug.
    this.logger[added > 0 ? 'log' : 'debug'](
      { task_id: task.id },
      `task ${task.id}: ${plural(added, 'new item')} (${result.items.length} returned by ` +
        `${plural(result.minersResponded, 'miner')}, ${page.kind} page` +
        (outsideWindow > 0 ? `; ${outsideWindow} outside the post window left out)` : ')'),
    );
    return added > 0 ? 'collected' : 'nothing_new';
  }
}

/** The oldest item's time: asked newest first, the answer holds everything found after it. */
function completeFrom(result: NetworkQueryResult): Date | null {
  if (result.items.length === 0) return null;
  return new Date(Math.min(...result.items.map((item) => parseIsoDate(item.datetime)!.getTime())));
}

/** ` (circuit_open 4, timeout 1)`, the failures by reason; nothing when none is counted. */
function failuresInBrief(reasons: QueryFailures['reasons']): string {
  const counted = Object.entries(reasons).map(([reason, count]) => `${reason} ${count}`);
  return counted.length > 0 ? ` (${counted.join(', ')})` : '';
}

/** `; 6 miners not asked: …`, the miners a task's query left out for budget; nothing for none. */
function leftOutForBudget(count: number): string {
  if (count === 0) return '';
  return (
    `; ${plural(count, 'miner')} not asked: their tasks' share of the ` +
    'OnDemandRequest budget is spent (TASK_BUDGET_RESERVE keeps the rest for users)'
  );
}
