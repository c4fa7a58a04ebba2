/** One hour in milliseconds: miners' time buckets, their call windows and budgets count in hours. */
export const HOUR_MS = 3_600_000;
