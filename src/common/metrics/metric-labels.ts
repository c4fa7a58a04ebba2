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
export const ITEM_CHECKS = [
  'malformed',
  'wrong_uri',
  'no_match',
  'duplicate',
  'over_limit',
] as const;
export type ItemCheck = (typeof ITEM_CHECKS)[number];

/**
 * Why an answer counted for nothing (gateway_miner_answers_dropped_total): every item dropped,
 * or more than half of them.
 */
export const ANSWER_DROP_REASONS = ['all_items', 'most_items'] as const;
export type AnswerDropReason = (typeof ANSWER_DROP_REASONS)[number];

/** Whose request a 429 refused (gateway_rate_limit_rejections_total). */
export const KEY_CLASSES = ['regular', 'validator', 'master', 'unauthenticated'] as const;
export type KeyClass = (typeof KEY_CLASSES)[number];

/** How a live fan-out ended (gateway_quorum_outcomes_total). */
export const QUORUM_RESULTS = ['quorum', 'partial', 'no_answer', 'no_miners'] as const;
export type QuorumResult = (typeof QUORUM_RESULTS)[number];

/** What an index sync did with a miner (gateway_index_sync_miners_total). */
export const INDEX_SYNC_RESULTS = ['synced', 'rejected', 'failed', 'skipped'] as const;

/** A step of the vote's publication (gateway_desirability_publication_*_total). */
export const PUBLICATION_STEPS = ['push', 'commit'] as const;
export type PublicationStep = (typeof PUBLICATION_STEPS)[number];

/** Why a publication attempt did not finish (gateway_desirability_publication_failures_total). */
export const PUBLICATION_FAILURE_REASONS = ['rate_limited', 'error'] as const;
export type PublicationFailureReason = (typeof PUBLICATION_FAILURE_REASONS)[number];
