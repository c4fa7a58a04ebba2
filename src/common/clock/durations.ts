/**
 * One hour in milliseconds: miners' time buckets, their call windows and budgets count in hours.
 */
export const HOUR_MS = 3_600_000;

/** One day in milliseconds: a date's whole day, the network's retention in days. */
export const DAY_MS = 24 * HOUR_MS;

/** One minute in milliseconds: miners keep a record's own time to the minute. */
export const MINUTE_MS = 60_000;

/**
 * The longest delay Node's timers keep (2^31 − 1 ms, about 24.8 days): a longer one fires after
 * 1 ms, so an interval above it ran its job hundreds of times a second and a timeout above it
 * cut every call at once. Every setting that feeds a timer is held under it, and so is the
 * devnet's latency fault.
 */
export const MAX_TIMER_MS = 2_147_483_647;
