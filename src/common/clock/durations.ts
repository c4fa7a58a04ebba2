/** One hour in milliseconds: miners' time buckets, their call windows and budgets count in hours. */
export const HOUR_MS = 3_600_000;

/** One minute in milliseconds: miners keep a record's own time to the minute. */
export const MINUTE_MS = 60_000;
