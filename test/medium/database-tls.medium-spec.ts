import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Pool } from 'pg';
import { DataSource } from 'typeorm';
import { databaseFailure, withoutPassword } from '../../src/common/lifecycle/startup-failure';
import { loadConfig } from '../../src/config/load-config';
import {
  buildDataSourceOptions,
  buildProbePoolConfig,
} from '../../src/database/data-source-options';
import { migrateDatabase } from '../../src/database/migrate';
import { makeTestCertificates, TestCertificates } from '../support/test-certificates';
import { startThrowawayPostgres, ThrowawayPostgres } from '../support/throwaway-servers';

/** The name the server's certificate is for; 127.0.0.1 reaches the same server by another. */
const CERTIFIED_HOST = 'localhost';

/** `text` as a regular expression matching it alone. */
const escape = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

const ENCRYPTED = 'SELECT ssl FROM pg_stat_ssl WHERE pid = pg_backend_pid()';

/** Whether the gateway's connections with DATABASE_URL are encrypted, once it has migrated. */
interface Encryption {
  pool: boolean;
  health: boolean;
}

/**
 * DATABASE_URL's TLS (docs/decisions.md, "Start-up": sslmode=require passed on as verify-full)
 * against a real Postgres with TLS on, through the gateway's own path: the URL read by
 * loadConfig, then the connections a start opens in its order (the migrations', the app's pool,
 * health's probe, each built by data-source-options.ts), and a failure as the start prints it.
 * The unit specs only parse the URLs these are built from. One server for every case; the
 * certificate is for `localhost` alone, made at test time by a CA of the spec's own.
 */
describe('DATABASE_URL against a Postgres that speaks TLS', () => {
  let directory: string;
  let certificates: TestCertificates;
  let postgres: ThrowawayPostgres | undefined;

  beforeAll(async () => {
    directory = mkdtempSync(join(tmpdir(), 'gateway-tls-'));
    certificates = makeTestCertificates(directory, CERTIFIED_HOST);
    postgres = await startThrowawayPostgres({
      settings: { ssl: 'on', ssl_cert_file: 'server.crt', ssl_key_file: 'server.key' },
      files: { 'server.crt': certificates.cert, 'server.key': certificates.key },
    });
  }, 60_000);
  afterAll(async () => {
    await postgres?.destroy();
    rmSync(directory, { recursive: true, force: true });
  });

  /** The server's DATABASE_URL on `host`, with `query`. */
  const databaseUrl = (host: string, query: string) => {
    const url = new URL(postgres!.url);
    return `postgres://postgres:postgres@${host}:${url.port}/postgres?${query}`;
  };

  /**
   * Connects as a start does: migrates (the start's first connection; a failure there rejects
   * with the start's own line, gateway.ts's databaseFailure naming DATABASE_URL), then asks
   * Postgres whether the app's pool and health's probe are encrypted.
   */
  async function connectAsTheGateway(url: string): Promise<Encryption> {
    const config = loadConfig({ NODE_ENV: 'test', DATABASE_URL: url });
    const databaseUrl = config.databaseUrl!;
    try {
      await migrateDatabase(databaseUrl, config.database.connectTimeoutMs);
    } catch (error) {
      throw databaseFailure(error, `DATABASE_URL=${withoutPassword(databaseUrl)}`, databaseUrl);
    }
    const pool = new DataSource(buildDataSourceOptions(databaseUrl, config.database));
    await pool.initialize();
    const health = new Pool(buildProbePoolConfig(databaseUrl, config.database));
    // As HealthRepository does: pg-pool's end() resolves before the server has read each
    // connection's goodbye, and afterAll's server stop then sends one a 57P01 that, without a
    // listener, is an unhandled 'error' event failing whichever case runs last.
    health.on('error', () => undefined);
    try {
      const [fromPool] = await pool.query<{ ssl: boolean }[]>(ENCRYPTED);
      const { rows: fromHealth } = await health.query<{ ssl: boolean }>(ENCRYPTED);
      return { pool: fromPool.ssl, health: fromHealth[0].ssl };
    } finally {
      await pool.destroy();
      await health.end();
    }
  }

  /**
   * The line a start refused with `url` prints (no password, no query), for Node's `reason`;
   * Node 24 adds a hint of its own to some (`…; if the root CA is installed locally, try
   * running Node.js with --use-system-ca`).
   */
  const refusal = (url: string, reason: string) =>
    new RegExp(
      `^${escape(`Startup failed: cannot use the database of DATABASE_URL=${withoutPassword(url)}: ${reason}`)}` +
        `(; [^(]*)? ${escape("(TLS: see the URL's sslmode and sslrootcert)")}$`,
    );

  const everyConnection = (encrypted: boolean): Encryption => ({
    pool: encrypted,
    health: encrypted,
  });

  it('connects encrypted with sslmode=verify-full and the CA as sslrootcert, on the certified host', async () => {
    const url = databaseUrl(CERTIFIED_HOST, `sslmode=verify-full&sslrootcert=${certificates.ca}`);
    await expect(connectAsTheGateway(url)).resolves.toEqual(everyConnection(true));
  });

  it('refuses verify-full on a host name the certificate is not for', async () => {
    const url = databaseUrl('127.0.0.1', `sslmode=verify-full&sslrootcert=${certificates.ca}`);
    await expect(connectAsTheGateway(url)).rejects.toThrow(
      refusal(
        url,
        "Hostname/IP does not match certificate's altnames: IP: 127.0.0.1 is not in the cert's list: ",
      ),
    );
  });

  it('verifies sslmode=require as verify-full: refused without the CA, encrypted with it, and no pg warning', async () => {
    const warnings = jest.spyOn(process, 'emitWarning');
    try {
      const untrusted = databaseUrl(CERTIFIED_HOST, 'sslmode=require');
      await expect(connectAsTheGateway(untrusted)).rejects.toThrow(
        refusal(untrusted, 'unable to verify the first certificate'),
      );
      const trusted = databaseUrl(CERTIFIED_HOST, `sslmode=require&sslrootcert=${certificates.ca}`);
      await expect(connectAsTheGateway(trusted)).resolves.toEqual(everyConnection(true));
      expect(warnings).not.toHaveBeenCalled();
    } finally {
      warnings.mockRestore();
    }
  });

  // libpq's verify-ca checks the chain only; pg 8's, which the gateway writes as verify-full,
  // the host name too.
  it('verifies sslmode=verify-ca as verify-full: the host name too', async () => {
    const url = databaseUrl('127.0.0.1', `sslmode=verify-ca&sslrootcert=${certificates.ca}`);
    await expect(connectAsTheGateway(url)).rejects.toThrow(
      refusal(
        url,
        "Hostname/IP does not match certificate's altnames: IP: 127.0.0.1 is not in the cert's list: ",
      ),
    );
  });

  it('connects without TLS with sslmode=disable', async () => {
    const url = databaseUrl(CERTIFIED_HOST, 'sslmode=disable');
    await expect(connectAsTheGateway(url)).resolves.toEqual(everyConnection(false));
  });

  // The modes the gateway leaves as they are, which the warning names for encryption alone.
  it.each(['sslmode=no-verify', 'uselibpqcompat=true&sslmode=require'])(
    'connects encrypted without verifying with %s',
    async (query) => {
      const url = databaseUrl('127.0.0.1', query);
      await expect(connectAsTheGateway(url)).resolves.toEqual(everyConnection(true));
    },
  );
});
