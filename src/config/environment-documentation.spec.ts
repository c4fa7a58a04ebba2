import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { getMetadataStorage } from 'class-validator';
import { load } from 'js-yaml';
import { MAX_TIMER_MS } from '../common/clock/durations';
import { EnvironmentVariables } from './environment-variables';
import { MAX_TIMER_SECONDS } from './setting-forms';

const ROOT = join(__dirname, '..', '..');
/** Read by docker-compose only (host directories it mounts, a host port), never by the service. */
const COMPOSE_ONLY = ['DEVNET_GATEWAY_PORT', 'HF_RESULTS_DIR', 'POSTGRES_PASSWORD', 'WALLETS_DIR'];

/** Every variable the schema validates: each field carries a class-validator decorator. */
function schemaVariables(): string[] {
  const metadata = getMetadataStorage().getTargetValidationMetadatas(
    EnvironmentVariables,
    '',
    true,
    false,
  );
  return [...new Set(metadata.map((entry) => entry.propertyName))].sort();
}

/** `NAME=` lines of .env.example, set or commented out (`# NAME=`). */
function envExampleVariables(): string[] {
  const text = readFileSync(join(ROOT, '.env.example'), 'utf8');
  return [...text.matchAll(/^#? ?([A-Z][A-Z0-9_]+)=/gm)].map((match) => match[1]).sort();
}

/** Names in the first column of the README's Configuration table (`A` / `B` rows name two). */
function readmeTableVariables(): string[] {
  const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
  const section = readme.slice(readme.indexOf('## Configuration'));
  const table = section.slice(0, section.indexOf('\n## '));
  const firstColumns = [...table.matchAll(/^\| ([^|]+) \|/gm)].map((match) => match[1]);
  return firstColumns.flatMap((cell) =>
    [...cell.matchAll(/`([A-Z][A-Z0-9_]+)`/g)].map((m) => m[1]),
  );
}

/** The README Configuration table's row that names `name` in its first column. */
function readmeRowOf(name: string): string {
  const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
  const section = readme.slice(readme.indexOf('## Configuration'));
  const table = section.slice(0, section.indexOf('\n## '));
  return (
    table
      .split('\n')
      .find((line) => /^\| [^|]+ \|/.test(line) && line.split('|')[1].includes(`\`${name}\``)) ?? ''
  );
}

/** `at least N`, `at least \`N\`` or `N..M` in a row, N not the start of a larger number. */
function saysMinimum(row: string, min: number): boolean {
  return new RegExp(`(at least \`?${min}(?!\\d)|[ (]${min}\\.\\.)`).test(row);
}

describe('Environment variables, as documented', () => {
  const variables = schemaVariables();

  it('finds the schema', () => {
    expect(variables).toEqual(expect.arrayContaining(['NODE_ENV', 'DATABASE_URL', 'MASTER_KEY']));
  });

  it('.env.example names every variable the service reads, and no other', () => {
    expect(envExampleVariables()).toEqual([...variables, ...COMPOSE_ONLY].sort());
  });

  it("the README's Configuration table names every variable, and no other", () => {
    expect([...new Set(readmeTableVariables())].sort()).toEqual(variables);
  });

  // KEY_CACHE_TTL_MS stopped at 60000 and SHUTDOWN_TIMEOUT_MS at 600000, and neither the table
  // nor .env.example said so. The longest timer (said once above the table) and
  // Number.MAX_SAFE_INTEGER (every integer's) are bounds the table does not repeat.
  it("the README's Configuration table gives each bounded setting's range, as min..max", () => {
    const general = [MAX_TIMER_MS, MAX_TIMER_SECONDS, Number.MAX_SAFE_INTEGER];
    const bounds = new Map<string, { min?: number; max?: number }>();
    for (const entry of getMetadataStorage().getTargetValidationMetadatas(
      EnvironmentVariables,
      '',
      true,
      false,
    )) {
      if (entry.name !== 'min' && entry.name !== 'max') continue;
      const bound = bounds.get(entry.propertyName) ?? {};
      bound[entry.name] = (entry.constraints as number[])[0];
      bounds.set(entry.propertyName, bound);
    }
    const undocumented = [...bounds]
      .filter(([, { max }]) => max !== undefined && !general.includes(max))
      .filter(([name, { min, max }]) => !readmeRowOf(name).includes(`${min}..${max}`))
      .map(([name, { min, max }]) => `${name} ${min}..${max}`);
    expect(undocumented).toEqual([]);
  });

  // METAGRAPH_SYNC_INTERVAL refused values under 12, MINER_MAX_RESPONSE_BYTES under 1024 and
  // the HTTP timeouts under 1000, and the table said none of it (a deployer's audit). A minimum
  // of 0 or 1 goes without saying.
  it("the README's Configuration table gives each setting's minimum above 1", () => {
    const minimums = getMetadataStorage()
      .getTargetValidationMetadatas(EnvironmentVariables, '', true, false)
      .filter((entry) => entry.name === 'min' && (entry.constraints as number[])[0] > 1);
    const checked = minimums.map((entry) => ({
      name: entry.propertyName,
      min: (entry.constraints as number[])[0],
    }));
    // The two smallest such minimums: a filter that selects fewer checks a table it never read.
    expect(checked).toEqual(
      expect.arrayContaining([
        { name: 'METAGRAPH_SYNC_INTERVAL', min: 12 },
        { name: 'INDEX_SYNC_INTERVAL', min: 10 },
      ]),
    );
    const undocumented = checked
      .filter(({ name, min }) => !saysMinimum(readmeRowOf(name), min))
      .map(({ name, min }) => `${name} ${min}`);
    expect(undocumented).toEqual([]);
  });

  it('reads a minimum in a row only as that whole number', () => {
    expect(saysMinimum('| `A` | `1` | at least 12 (a block) |', 12)).toBe(true);
    expect(saysMinimum('| `A` | `1` | the pool at least `5` |', 5)).toBe(true);
    expect(saysMinimum('| `A` | `1` | a deadline 100..120000 ms |', 100)).toBe(true);
    expect(saysMinimum('| `A` | `1` | at least 120 |', 12)).toBe(false);
    expect(saysMinimum('| `A` | `1` | 1100..2000 |', 100)).toBe(false);
    expect(saysMinimum('| `A` | `1` | at most 12 |', 12)).toBe(false);
  });

  it('docker-compose gives the api service every setting of .env, and sets only known ones', () => {
    const compose = load(readFileSync(join(ROOT, 'docker-compose.yml'), 'utf8')) as {
      services: Record<string, { env_file?: string; environment?: Record<string, unknown> }>;
    };
    for (const name of ['api', 'api-devnet']) {
      const service = compose.services[name];
      expect(
        Object.keys(service.environment ?? {}).filter((key) => !variables.includes(key)),
      ).toEqual([]);
    }
    // Without it, settings of .env (GRAVITY_REPO_URL, TASK_*, …) never reached the container.
    expect(compose.services.api.env_file).toBe('.env');
  });

  it('.env.example names every variable docker-compose reads from it', () => {
    const compose = readFileSync(join(ROOT, 'docker-compose.yml'), 'utf8');
    const read = [...compose.matchAll(/\$\{([A-Z][A-Z0-9_]*)/g)].map((match) => match[1]);
    expect([...new Set(read)].filter((name) => !envExampleVariables().includes(name))).toEqual([]);
  });
});
