import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

/** The parts of a V8 CPU profile (what `node --cpu-prof` writes) read here. */
interface CpuProfile {
  nodes: { id: number; callFrame: { functionName: string } }[];
  /** Microseconds on the monotonic clock; each sample's time is this plus the deltas so far. */
  startTime: number;
  samples: number[];
  timeDeltas: number[];
}

/** An interval on the monotonic clock, in microseconds. */
export interface ClockSpan {
  start: number;
  end: number;
}

/**
 * Now on the clock V8 stamps profile samples with, in microseconds. Both V8's ticks and
 * `process.hrtime` read CLOCK_MONOTONIC, which every process on the machine shares: spans taken
 * here select samples from another process's profile.
 */
export function monotonicMicros(): number {
  return Number(process.hrtime.bigint() / 1000n);
}

/**
 * Microseconds the profiled process was busy (every sample but `(idle)`: JavaScript, GC, native
 * code) within `spans`. Reads the one profile in `dir`, which a process wrote as it exited.
 */
export function busyMicros(dir: string, spans: ClockSpan[]): number {
  const files = readdirSync(dir).filter((name) => name.endsWith('.cpuprofile'));
  if (files.length !== 1) throw new Error(`${dir}: ${files.length} CPU profiles, expected one`);
  const profile = JSON.parse(readFileSync(join(dir, files[0]), 'utf8')) as CpuProfile;
  const idle = new Set(
    profile.nodes.filter((node) => node.callFrame.functionName === '(idle)').map((n) => n.id),
  );
  let time = profile.startTime;
  let busy = 0;
  profile.samples.forEach((id, index) => {
    // A sample stands for the interval since the one before it.
    const delta = profile.timeDeltas[index] ?? 0;
    time += delta;
    if (!idle.has(id) && spans.some((span) => time > span.start && time <= span.end)) busy += delta;
  });
  return busy;
}
