import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';

const ROOT = join(__dirname, '..', '..');

/** The committed copy of `/openapi.json`; `npm run openapi:snapshot` rewrites it. */
export const OPENAPI_SNAPSHOT = join(ROOT, 'docs', 'openapi.json');

/**
 * JSON with every object's keys sorted, two-space indented, ending in a newline: the same
 * document always gives the same bytes, whatever order the modules registered their routes
 * and schemas in, so a regenerated snapshot differs only where the interface does.
 */
export function canonicalJson(value: unknown): string {
  return `${JSON.stringify(sortKeys(value), null, 2)}\n`;
}

function sortKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortKeys);
  if (typeof value !== 'object' || value === null) return value;
  return Object.fromEntries(
    Object.keys(value)
      .sort()
      .map((key) => [key, sortKeys((value as Record<string, unknown>)[key])]),
  );
}

export interface LintProblem {
  ruleId: string;
  severity: 'error' | 'warn';
  message: string;
  location: { pointer: string }[];
}

/**
 * Every problem `redocly lint` (the pinned CLI in node_modules, with ./redocly.yaml: the
 * recommended rules) finds in `document`, warnings included. Offline: no telemetry, no
 * update check. Bounded in time.
 */
export async function redoclyProblems(document: unknown): Promise<LintProblem[]> {
  const directory = await mkdtemp(join(tmpdir(), 'openapi-lint-'));
  try {
    const file = join(directory, 'openapi.json');
    await writeFile(file, JSON.stringify(document));
    const cli = join(ROOT, 'node_modules', '@redocly', 'cli', 'bin', 'cli.js');
    const args = [cli, 'lint', '--config', join(ROOT, 'redocly.yaml'), '--format', 'json', file];
    // lint exits 1 when it finds errors; its JSON report is on stdout either way.
    const { stdout } = await promisify(execFile)(process.execPath, args, {
      timeout: 60_000,
      env: { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true' },
    }).catch((error: { stdout?: string; message: string }) => {
      if (!error.stdout) throw new Error(`redocly lint did not report: ${error.message}`);
      return { stdout: error.stdout };
    });
    return (JSON.parse(stdout) as { problems: LintProblem[] }).problems;
  } finally {
    await rm(directory, { recursive: true, force: true });
  }
}
