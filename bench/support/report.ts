import os from 'node:os';
import { relative } from 'node:path';

/**
 * A target's verdict: MET or MISSED, or UNDECIDED when the run cannot tell (rounds on both sides
 * of the target, or a baseline that missed it too).
 */
export type Verdict = 'MET' | 'MISSED' | 'UNDECIDED';

/** Progress goes to stderr, so that stdout carries only the report. */
export function progress(message: string): void {
  process.stderr.write(`  ${message}\n`);
}

export function formatInt(value: number): string {
  return Math.round(value).toLocaleString('en-US');
}

/** A share (0.43) as a whole percentage ("43%"). */
export function formatPercent(share: number): string {
  return `${(100 * share).toFixed(0)}%`;
}

/** autocannon records whole milliseconds: a 0 there means "under a millisecond". */
export function formatMs(value: number): string {
  return value === 0 ? '<1' : String(value);
}

/** Left-aligns the first column, right-aligns the others (numbers). */
export function table(rows: string[][]): string {
  const widths = (rows[0] ?? []).map((_, column) =>
    Math.max(...rows.map((row) => (row[column] ?? '').length)),
  );
  const line = (row: string[]): string =>
    row.map((cell, c) => (c === 0 ? cell.padEnd(widths[c]) : cell.padStart(widths[c]))).join('   ');
  return rows.map(line).join('\n');
}

/** The command as typed (npm script, BENCH_* overrides) and what it ran, to repeat a run. */
export function commandLine(): string {
  const script = relative(process.cwd(), process.argv[1] ?? '');
  const node = ['node', script, ...process.argv.slice(2)].join(' ');
  const overrides = Object.entries(process.env)
    .filter(([name]) => name.startsWith('BENCH_'))
    .map(([name, value]) => `${name}=${value} `)
    .join('');
  const npm = process.env.npm_lifecycle_event;
  return npm ? `${overrides}npm run ${npm}   (runs: ${node})` : `${overrides}${node}`;
}

export function machineLine(): string {
  const cpus = os.cpus();
  const model = cpus[0]?.model.trim() ?? 'unknown CPU';
  const memory = (os.totalmem() / 2 ** 30).toFixed(1);
  return (
    `${cpus.length} CPUs (${model}), ${memory} GiB RAM, ` +
    `${os.platform()} ${os.release()} ${os.arch()}, node ${process.version}`
  );
}

/** How often each value occurs, by value: `3×290 4×10` (for per-request fields such as meta). */
export function tally(values: readonly (string | number | boolean)[]): string {
  const counts = new Map<string, number>();
  for (const value of values) counts.set(String(value), (counts.get(String(value)) ?? 0) + 1);
  const sorted = [...counts].sort(([a], [b]) => a.localeCompare(b, 'en', { numeric: true }));
  return sorted.map(([value, count]) => `${value}×${count}`).join(' ') || 'none';
}

/** 1st, 2nd, 3rd, 4th, 11th, 21st… */
export function ordinal(n: number): string {
  const suffix = n % 100 >= 11 && n % 100 <= 13 ? 'th' : (['th', 'st', 'nd', 'rd'][n % 10] ?? 'th');
  return `${n}${suffix}`;
}
