import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { load } from 'js-yaml';
import { databaseFailure, StartupError } from '../common/lifecycle/startup-failure';
import { MINIMUM_POSTGRES_MAJOR, unsupportedPostgres } from './postgres-version';

const ROOT = join(__dirname, '..', '..');

// Migrations use UNIQUE NULLS NOT DISTINCT (15) and gen_random_uuid() (13): on a managed
// Postgres 13 or 14 the first start failed half-way through migrating with a syntax error.
describe(unsupportedPostgres.name, () => {
  it('refuses a server older than 15, naming the version found and the one required', () => {
    const refusal = unsupportedPostgres(140012);
    expect(refusal?.message).toBe(
      'PostgreSQL 14.12 (server_version_num 140012) is too old: the gateway needs PostgreSQL 15 or later',
    );
  });

  it('names a version before 10 by its three parts', () => {
    expect(unsupportedPostgres(90624)?.message).toMatch(/^PostgreSQL 9\.6\.24 /);
  });

  it('takes 15 and later', () => {
    expect(unsupportedPostgres(150000)).toBeUndefined();
    expect(unsupportedPostgres(160004)).toBeUndefined();
  });

  it('is named in one line by the setting of the database at start-up', () => {
    const failure = databaseFailure(
      unsupportedPostgres(140012),
      'DATABASE_URL=postgres://gateway:***@db:5432/gateway',
    );
    expect(failure).toBeInstanceOf(StartupError);
    expect((failure as Error).message).toBe(
      'Startup failed: cannot use the database of DATABASE_URL=postgres://gateway:***@db:5432/gateway: ' +
        'PostgreSQL 14.12 (server_version_num 140012) is too old: the gateway needs PostgreSQL 15 or later',
    );
  });
});

describe('The Postgres required, as documented and deployed', () => {
  it('is said in the README where it lists what the gateway needs', () => {
    const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
    const quickStart = readme.slice(readme.indexOf('## Quick start'), readme.indexOf('### Tests'));
    expect(quickStart).toContain(`PostgreSQL ${MINIMUM_POSTGRES_MAJOR} or later`);
  });

  it("is met by docker-compose's postgres images", () => {
    const compose = load(readFileSync(join(ROOT, 'docker-compose.yml'), 'utf8')) as {
      services: Record<string, { image?: string }>;
    };
    const majors = Object.values(compose.services)
      .map((service) => /^postgres:(\d+)/.exec(service.image ?? '')?.[1])
      .filter((major) => major !== undefined)
      .map(Number);
    expect(majors.length).toBeGreaterThan(0);
    for (const major of majors) expect(major).toBeGreaterThanOrEqual(MINIMUM_POSTGRES_MAJOR);
  });
});
