import { ClockSpan, monotonicMicros } from './cpu-profile';
import { LoadOptions, LoadTarget, measure, Round, trackUsage } from './measure';
import { formatInt, formatMs, progress } from './report';
import { roundOrder, Target, TARGETS } from './health-targets';

// bench:health's load (bench/health.ts): every target warmed up, then measured in interleaved
// rounds, each round's CPU time and clock span kept for the report and the CPU profiles.

/**
 * A warm-up per target, then rounds alternating targets (roundOrder): slow drifts of the machine
 * hit all.
 */
export async function loadRounds(
  targets: Record<Target, LoadTarget>,
  pids: Record<Target, number | undefined>,
  options: LoadOptions,
): Promise<{
  rounds: Record<Target, Round[]>;
  /** The service's responses, warm-up included (each wrote a log line). */
  serviceResponses: number;
  cpu: Record<Target, number[]>;
  /** The load generator's (this process's) share of a core in each target's rounds. */
  clientCpu: Record<Target, number[]>;
  /** When each target's measured rounds ran, and how many responses they had. */
  spans: Record<Target, ClockSpan[]>;
  roundResponses: Record<Target, number>;
}> {
  let serviceWarmUpResponses = 0;
  for (const target of TARGETS) {
    progress(`warm-up ${target}: ${options.warmupSeconds} s`);
    const warmUp = await measure(
      `warm-up ${target}`,
      targets[target],
      options.warmupSeconds,
      options.connections,
    );
    if (target === 'service') serviceWarmUpResponses += warmUp.responses;
  }
  const rounds = perTarget<Round>();
  const cpu = perTarget<number>();
  const clientCpu = perTarget<number>();
  const spans = perTarget<ClockSpan>();
  const roundResponses = Object.fromEntries(TARGETS.map((t) => [t, 0])) as Record<Target, number>;
  for (let index = 1; index <= options.rounds; index += 1) {
    for (const target of roundOrder(index)) {
      const name = `round ${index}/${options.rounds} ${target}`;
      const usage = trackUsage([pids[target], process.pid]);
      const start = monotonicMicros();
      const round = await measure(name, targets[target], options.seconds, options.connections);
      spans[target].push({ start, end: monotonicMicros() });
      rounds[target].push(round);
      roundResponses[target] += round.responses;
      const used = usage();
      cpu[target].push(used.cpu[0]);
      clientCpu[target].push(used.cpu[1]);
      progress(
        `${name}: ${formatInt(round.rps)} req/s, p50 ${formatMs(round.p50)} ms, p99 ${formatMs(round.p99)} ms`,
      );
    }
  }
  const serviceResponses = serviceWarmUpResponses + roundResponses.service;
  return { rounds, serviceResponses, cpu, clientCpu, spans, roundResponses };
}

/** An empty list per target. */
function perTarget<T>(): Record<Target, T[]> {
  return Object.fromEntries(TARGETS.map((target) => [target, [] as T[]])) as Record<Target, T[]>;
}
