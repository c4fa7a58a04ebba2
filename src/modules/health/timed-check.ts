import { roundTo } from '../../common/round-to';
import { within } from '../../common/within';
import { ComponentStatusDto } from './dto/system-status.dto';

const CHECK_TIMEOUT_MS = 1000;

/**
 * Every check answers within CHECK_TIMEOUT_MS, whatever it waits on: a Postgres that stops
 * answering without closing its connections (frozen, or cut off by a partition) holds a query
 * until the network gives up, and health is what a load balancer polls.
 */
export function inTime<T>(check: Promise<T>): Promise<T> {
  return within(check, CHECK_TIMEOUT_MS);
}

/** A round trip's check: healthy with its latency when it answers in time, else unhealthy. */
export async function timed(check: () => Promise<unknown>): Promise<ComponentStatusDto> {
  const started = performance.now();
  try {
    await inTime(check());
    return { status: 'healthy', latency_ms: roundTo(performance.now() - started, 2) };
  } catch (error) {
    return {
      status: 'unhealthy',
      latency_ms: roundTo(performance.now() - started, 2),
      error: (error as Error).message,
    };
  }
}
