import { MinerFailureReason } from '../query-failures';
import { SpotCheckResult } from './index-spot-checks';

// What one index sync run found, kept apart from the run itself: every step of the run (one
// miner's sync, the drops at its end) adds to the one report, the job asks of it whether the run
// counted (calledSomeMiner), and the run's log lines and metrics are read off it.

export interface IndexSyncReport {
  miners: number;
  synced: number;
  rejected: number;
  failed: number;
  /**
   * Not called, or refused without fault (no budget left, blacklisted, not served…); `replaced`:
   * not called because its uid is no longer the miner queued; `no_axon`: it took its axon down
   * after it was queued (SkipReason).
   */
  skipped: number;
  skippedReasons: Partial<Record<SkipReason, number>>;
  rows: number;
  seconds: number;
  spotChecks: SpotCheckResult[];
  /** Uids whose index was dropped: STALE_AFTER_SYNCS syncs in a row missed by its own fault. */
  staleDropped: number[];
  /** Index rows of hours older than MAX_DATA_AGE_DAYS removed. */
  oldRowsDropped: number;
  /** Labels no miner's index names any longer, deleted. */
  labelsDropped: number;
  /**
   * Days of stored items (the item store's daily partitions) past the retention, dropped: said,
   * as nothing else said it (a soak audit's finding).
   */
  storedDaysDropped: number;
}

/**
 * Why a miner was skipped: a refusal without fault, its uid changed hands before its call
 * (`replaced`), or the axon it serves was taken down before its call (`no_axon`).
 */
export type SkipReason = MinerFailureReason | 'replaced' | 'no_axon';

/**
 * Skips made without calling the miner: our bulkhead, an open circuit, a refused address, no
 * budget left, its uid or axon gone. The others are a miner's answers (a 403, a 404) or a call
 * abandoned at shutdown.
 */
const NOT_CALLED: ReadonlySet<SkipReason> = new Set<SkipReason>([
  'busy',
  'circuit_open',
  'address_refused',
  'no_budget',
  'replaced',
  'no_axon',
]);

/**
 * Whether a run called some miner. One that called none spent no call budget and learnt
 * nothing of the miners: it does not count for the interval (the job is tried again soon, as
 * the metagraph may since have given it miners to call) nor as a sync they missed.
 */
export function calledSomeMiner(report: IndexSyncReport): boolean {
  if (report.synced + report.rejected + report.failed > 0) return true;
  return Object.entries(report.skippedReasons).some(
    ([reason, count]) => count > 0 && !NOT_CALLED.has(reason as SkipReason),
  );
}

/** The report of a run over `miners` miners, before any of them is synced. */
export function emptyReport(miners: number): IndexSyncReport {
  return {
    miners,
    synced: 0,
    rejected: 0,
    failed: 0,
    skipped: 0,
    skippedReasons: {},
    rows: 0,
    seconds: 0,
    spotChecks: [],
    staleDropped: [],
    oldRowsDropped: 0,
    labelsDropped: 0,
    storedDaysDropped: 0,
  };
}

export function countSkip(report: IndexSyncReport, reason: SkipReason): void {
  report.skipped++;
  report.skippedReasons[reason] = (report.skippedReasons[reason] ?? 0) + 1;
}

/** The line a run logs while its queue is worked through, `seconds` after it started. */
export function progressLine(report: IndexSyncReport, seconds: number): string {
  return `index sync: ${minersLine(report, seconds)}`;
}

/**
 * The run's last line, told apart from the queue's end (which reads the same miners): what the
 * spot checks and the drops after the queue did, so that an operator sees it without metrics.
 * A run `cutShort` by shutdown ran neither (see IndexSyncService).
 */
export function endLine(report: IndexSyncReport, cutShort: boolean): string {
  if (cutShort)
    return `index sync cut short by shutdown after ${report.seconds} s: ${minersLine(report, report.seconds)}`;
  const checks = report.spotChecks;
  const withProblems = checks.filter((check) => check.problems.length > 0).length;
  return (
    `index sync finished in ${report.seconds} s: ${minersLine(report, report.seconds)}; ` +
    `${checks.length} spot checks (${withProblems} with problems), ` +
    `${report.staleDropped.length} stale indexes dropped, ` +
    `${report.oldRowsDropped} rows of expired hours dropped` +
    (report.labelsDropped > 0 ? `, ${report.labelsDropped} labels no index names deleted` : '') +
    (report.storedDaysDropped > 0
      ? `, ${report.storedDaysDropped} days of stored items past the retention dropped`
      : '')
  );
}

/** The miners' part of a line, its rows/s over `seconds` (the line's own, where it names one). */
function minersLine(report: IndexSyncReport, seconds: number): string {
  const done = report.synced + report.rejected + report.failed + report.skipped;
  const skipped = Object.entries(report.skippedReasons)
    .map(([reason, count]) => `${reason}: ${count}`)
    .join(', ');
  return (
    `${done}/${report.miners} miners, ${report.rows} rows loaded, ${Math.round(report.rows / Math.max(seconds, 0.001))} rows/s` +
    (report.rejected + report.failed > 0
      ? `, ${report.rejected} rejected, ${report.failed} failed`
      : '') +
    (report.skipped > 0 ? `, ${report.skipped} skipped (${skipped})` : '')
  );
}
