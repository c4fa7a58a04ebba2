import { readFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import { StartupError } from '../../common/lifecycle/startup-failure';
import { parseDesirabilityList } from './desirability-parser';
import { JobView, toJobView } from './desirability.types';

/**
 * Reads the network owner's default desirabilities (a JSON list in either format, checked by
 * the same rules as a submission) and normalizes it. Any problem is fatal: a service that
 * silently dropped the owner's list would publish a different aggregate.
 */
export async function loadDefaultDesirabilities(file: string): Promise<JobView[]> {
  const path = resolve(file);
  // A refusal names its setting: printed as it is, without a stack (gateway.ts).
  const fail = (problem: string) =>
    new StartupError(`Startup failed: DEFAULT_DESIRABILITIES_FILE (${path}): ${problem}`);
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (error) {
    throw fail(`cannot be read: ${(error as Error).message}`);
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw fail(`is not valid JSON: ${(error as Error).message}`);
  }
  const parsed = parseDesirabilityList(value, []);
  if (!parsed.ok) {
    const problems = parsed.errors.map((error) => `${formatLoc(error.loc)}: ${error.msg}`);
    throw fail(`is not a valid desirability list:\n  - ${problems.join('\n  - ')}`);
  }
  return parsed.value.jobs.map(toJobView);
}

function formatLoc(loc: (string | number)[]): string {
  return (
    loc.map((part) => (typeof part === 'number' ? `[${part}]` : `.${part}`)).join('') || '(root)'
  );
}
