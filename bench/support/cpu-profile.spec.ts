import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { busyMicros, ClockSpan, monotonicMicros } from './cpu-profile';

// A child busy for 300 ms, then idle for 300 ms, profiled by V8; it prints its two spans, read
// on the clock `monotonicMicros` reads.
const CHILD = `
const now = () => Number(process.hrtime.bigint() / 1000n);
const busyStart = now();
while (now() - busyStart < 300000);
const idleStart = now();
setTimeout(() => console.log(JSON.stringify({
  busy: { start: busyStart, end: idleStart },
  idle: { start: idleStart, end: now() },
})), 300);
`;

describe('busyMicros', () => {
  let dir: string;
  let spans: { busy: ClockSpan; idle: ClockSpan };
  let before: number;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'cpu-profile-spec-'));
    before = monotonicMicros();
    const { stdout } = await promisify(execFile)(process.execPath, [
      '--cpu-prof',
      `--cpu-prof-dir=${dir}`,
      '-e',
      CHILD,
    ]);
    spans = JSON.parse(stdout) as typeof spans;
  });

  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('reads the clock the profiled process stamps its spans with', () => {
    expect(spans.busy.start).toBeGreaterThan(before);
    expect(spans.idle.end).toBeLessThan(monotonicMicros());
  });

  it('counts a busy span as busy and an idle one as not', () => {
    const busy = busyMicros(dir, [spans.busy]);
    const idle = busyMicros(dir, [spans.idle]);
    expect(busy).toBeGreaterThan(0.85 * 300_000);
    // Nothing from before the span (the child's start-up) or after it; a sample's interval may
    // begin before the span, so one interval of slack, which a loaded machine stretches (13 ms
    // was seen during a full run under strace).
    expect(busy).toBeLessThanOrEqual(spans.busy.end - spans.busy.start + 25_000);
    expect(idle).toBeLessThan(0.1 * 300_000);
    expect(busyMicros(dir, [spans.busy, spans.idle])).toBe(busy + idle);
  });

  it('counts nothing outside the spans', () => {
    expect(busyMicros(dir, [])).toBe(0);
  });

  it('refuses a directory without exactly one profile', () => {
    const empty = mkdtempSync(join(tmpdir(), 'cpu-profile-spec-'));
    try {
      expect(() => busyMicros(empty, [])).toThrow('0 CPU profiles, expected one');
    } finally {
      rmSync(empty, { recursive: true, force: true });
    }
  });
});
