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

/**
 * The OWASP lint's findings on the committed document, one a line (`npm run openapi:snapshot`
 * rewrites it): docs/decisions.md, "OWASP lint of the document", answers them. A finding a change
 * adds shows in review as a line added here, and fails the test until the file is rewritten.
 */
export const OWASP_FINDINGS = join(ROOT, 'docs', 'owasp-findings.txt');

interface SpectralFinding {
  code: string;
  path: (string | number)[];
  /** Spectral's: 0 error, 1 warning, 2 information, 3 hint. */
  severity: number;
}

const SEVERITIES = ['error', 'warn', 'info', 'hint'];

/**
 * Every finding of Spectral with the OWASP ruleset (the pinned CLI, ./.spectral.yaml) in
 * `document`, as sorted lines `severity rule #/json/pointer`. Not its messages or line numbers,
 * which move with the tool's wording and the document's layout while the finding stays.
 */
export async function owaspFindings(document: unknown): Promise<string[]> {
  const report = await lintReport(
    join(ROOT, 'node_modules', '@stoplight', 'spectral-cli', 'dist', 'index.js'),
    (file) => ['lint', '--ruleset', join(ROOT, '.spectral.yaml'), '-f', 'json', '-q', file],
    document,
  );
  return (JSON.parse(report) as SpectralFinding[])
    .map(({ code, path, severity }) => `${SEVERITIES[severity]} ${code} ${jsonPointer(path)}`)
    .sort();
}

/** RFC 6901, as a URI fragment: `/` in a key is `~1`, so `/api/v1/keys` stays one segment. */
function jsonPointer(path: (string | number)[]): string {
  const segments = path.map((segment) => String(segment).replace(/~/g, '~0').replace(/\//g, '~1'));
  return `#/${segments.join('/')}`;
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
  const report = await lintReport(
    join(ROOT, 'node_modules', '@redocly', 'cli', 'bin', 'cli.js'),
    (file) => ['lint', '--config', join(ROOT, 'redocly.yaml'), '--format', 'json', file],
    document,
    { REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true' },
  );
  return (JSON.parse(report) as { problems: LintProblem[] }).problems;
}

/**
 * The JSON report a lint CLI of node_modules (`cli`, run by this Node with `args(file)`) writes
 * on stdout about `document`, written to a file of its own for it. Linters exit 1 when they
 * find errors; their report is on stdout either way. Bounded in time.
 */
async function lintReport(
  cli: string,
  args: (file: string) => string[],
  document: unknown,
  env: NodeJS.ProcessEnv = {},
): Promise<string> {
  const directory = await mkdtemp(join(tmpdir(), 'openapi-lint-'));
  try {
    const file = join(directory, 'openapi.json');
    await writeFile(file, canonicalJson(document));
    const { stdout } = await promisify(execFile)(process.execPath, [cli, ...args(file)], {
      timeout: 120_000,
      maxBuffer: 64 * 1024 * 1024,
      env: { ...process.env, ...env },
    }).catch((error: { stdout?: string; message: string }) => {
      if (!error.stdout) throw new Error(`${cli} did not report: ${error.message}`);
      return { stdout: error.stdout };
    });
    return stdout;
  } finally {
    await rm(directory, { recursive: true, force: true });
  }
}
