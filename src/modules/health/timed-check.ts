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

/** A check's answer in time, or its failure (its timeout's included), with its latency in ms. */
export type Measured<T> = { latency_ms: number } & ({ value: T } | { error: Error });

/** Runs `check` within CHECK_TIMEOUT_MS and times it, to two decimals. */
export async function measured<T>(check: () => Promise<T>): Promise<Measured<T>> {
  const started = performance.now();
  const latency = () => roundTo(performance.now() - started, 2);
  try {
    const value = await inTime(check());
    return { latency_ms: latency(), value };
  } catch (error) {
    return { latency_ms: latency(), error: error as Error };
  }
}

/** A round trip's check: healthy with its latency when it answers in time, else unhealthy. */
export async function timed(check: () => Promise<unknown>): Promise<ComponentStatusDto> {
  return componentOf(await measured(check));
}

/** A measured round trip as a component: healthy with its latency, or unhealthy with its error. */
export function componentOf(read: Measured<unknown>): ComponentStatusDto {
  return 'error' in read
    ? { status: 'unhealthy', latency_ms: read.latency_ms, error: read.error.message }
    : { status: 'healthy', latency_ms: read.latency_ms };
}
