/**
 * The values of the labels below, each a fixed set: every series of these counters exists from
 * the start, at 0, so that an alert on `increase()` sees the first event as a change.
 */

/** Why a compile of a task's dataset failed (gateway_task_compile_failures_total). */
export const COMPILE_FAILURE_REASONS = [
  'disk_full',
  'io',
  'database',
  'conversion',
  'other',
] as const;
export type CompileFailureReason = (typeof COMPILE_FAILURE_REASONS)[number];

/** How one collection of a task ended (gateway_task_collections_total). */
export const COLLECTION_OUTCOMES = [
  'collected',
  'nothing_new',
  'nothing_collected',
  'failed',
  'skipped',
  'shutdown',
] as const;
export type CollectionOutcome = (typeof COLLECTION_OUTCOMES)[number];

/** Where a periodic job's attempt failed (gateway_job_failures_total): before its run, or in it. */
export const JOB_FAILURE_STAGES = ['start', 'run'] as const;
export type JobFailureStage = (typeof JOB_FAILURE_STAGES)[number];

/** The check that dropped an item of a miner's answer (gateway_miner_items_dropped_total). */
export const ITEM_CHECKS = ['malformed', 'wrong_uri', 'no_match', 'duplicate'] as const;
export type ItemCheck = (typeof ITEM_CHECKS)[number];

/**
 * Why an answer counted for nothing (gateway_miner_answers_dropped_total): every item dropped,
 * or more than half of them.
 */
export const ANSWER_DROP_REASONS = ['all_items', 'most_items'] as const;
export type AnswerDropReason = (typeof ANSWER_DROP_REASONS)[number];
