import { EnvironmentVariables } from './environment-variables';

/** A command that makes a master key (README, .env.example and the refusal say it). */
export const MASTER_KEY_COMMAND = 'openssl rand -hex 32';

/** Master keys published as examples (.env.example until it left the value empty): known to all. */
const SAMPLE_MASTER_KEYS = ['change-me-to-a-long-random-string'];

/** What production requires that other environments may leave unset: a master key and a database. */
export function productionProblems(vars: EnvironmentVariables): string[] {
  if (vars.NODE_ENV !== 'production') return [];
  const problems: string[] = [];
  if (!vars.MASTER_KEY) problems.push('MASTER_KEY: required when NODE_ENV=production');
  else if (SAMPLE_MASTER_KEYS.includes(vars.MASTER_KEY))
    problems.push(
      `MASTER_KEY: the sample value of .env.example is public, refused when NODE_ENV=production; generate one: ${MASTER_KEY_COMMAND}`,
    );
  if (!vars.DATABASE_URL) problems.push('DATABASE_URL: required when NODE_ENV=production');
  return problems;
}
