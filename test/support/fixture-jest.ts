import { execFile } from 'node:child_process';
import { createRequire } from 'node:module';
import { join } from 'node:path';

const ROOT = join(__dirname, '..', '..');

/** What jest's `--json` says of a run: one result per file. */
export interface FixtureJestRun {
  json: {
    testResults: {
      name: string;
      status: string;
      message: string;
      assertionResults: { title: string; status: string; failureMessages: string[] }[];
    }[];
  };
  stderr: string;
}

/**
 * Runs one fixture (a path from the project's root) in a jest of its own, with the unit
 * project's transform and the given settings (a test environment, setup files). For the specs
 * of the test support itself, whose failures are what they test.
 */
export function runFixtureJest(
  fixture: string,
  settings: Record<string, unknown>,
  extraArgs: readonly string[] = [],
): Promise<FixtureJestRun> {
  const config = {
    rootDir: ROOT,
    testMatch: [`<rootDir>/${fixture}`],
    transform: unitProject().transform,
    ...settings,
  };
  const args = [
    join(ROOT, 'node_modules', 'jest', 'bin', 'jest.js'),
    '--config',
    JSON.stringify(config),
    '--json',
    '--ci',
    '--runInBand',
    ...extraArgs,
    fixture,
  ];
  return new Promise((resolve, reject) =>
    execFile(process.execPath, args, { cwd: ROOT, timeout: 90_000 }, (error, stdout, stderr) => {
      // jest exits 1 for a failed suite: that is what is tested; its JSON is on stdout.
      try {
        resolve({ json: JSON.parse(stdout) as FixtureJestRun['json'], stderr });
      } catch {
        reject(error ?? new Error(`no JSON from jest: ${stdout}`));
      }
    }),
  );
}

/** The unit project of jest.config.js, whose transform the fixture's jest takes. */
function unitProject(): { transform: unknown } {
  const { projects } = createRequire(__filename)(join(ROOT, 'jest.config.js')) as {
    projects: { displayName: string; transform: unknown }[];
  };
  return projects.find((project) => project.displayName === 'unit')!;
}
