import { buildDataSourceOptions, buildProbePoolConfig } from '../database/data-source-options';
import { explicitTlsMode, pgSslModeProblem, tlsModeWarning } from './database-tls';

const HOST = 'postgres://gateway:secret@db.example.com:5432/validator';

/**
 * What pg makes of a connection URL's TLS: a Client (not connected), loaded afresh (pg warns once).
 */
function parsedByPg(url: string): { ssl: unknown; warnings: unknown[] } {
  const warnings: unknown[] = [];
  const emitWarning = jest.spyOn(process, 'emitWarning').mockImplementation((warning) => {
    warnings.push(warning);
  });
  try {
    let ssl: unknown;
    jest.isolateModules(() => {
      const { Client } = jest.requireActual<typeof import('pg')>('pg');
      ssl = (new Client({ connectionString: url }) as unknown as { ssl: unknown }).ssl;
    });
    return { ssl, warnings };
  } finally {
    emitWarning.mockRestore();
  }
}

/**
 * The URL each connection of the gateway is made with: the app's pool, the migrations', health's.
 */
function urlsBuiltFrom(url: string): string[] {
  return [
    (buildDataSourceOptions(url) as { url: string }).url,
    buildProbePoolConfig(url).connectionString!,
  ];
}

describe(explicitTlsMode.name, () => {
  // pg 8 takes these as verify-full and prints a multi-line SECURITY WARNING on stderr; pg 9
  // will take them as libpq does, without verifying the server's certificate.
  it.each(['require', 'prefer', 'verify-ca'])(
    'gives pg sslmode=%s as verify-full: the certificate verified, no warning printed',
    (mode) => {
      for (const built of urlsBuiltFrom(`${HOST}?sslmode=${mode}&application_name=x`)) {
        expect(built).toBe(`${HOST}?sslmode=verify-full&application_name=x`);
        // No rejectUnauthorized: false, no checkServerIdentity: Node's full verification.
        expect(parsedByPg(built)).toEqual({ ssl: {}, warnings: [] });
      }
    },
  );

  it.each([
    HOST,
    `${HOST}?sslmode=verify-full`,
    `${HOST}?sslmode=disable`,
    `${HOST}?sslmode=no-verify`,
    `${HOST}?uselibpqcompat=true&sslmode=require`,
  ])('leaves a URL whose TLS is already explicit as it is: %s', (url) => {
    expect(explicitTlsMode(url)).toBe(url);
  });

  it('rewrites every sslmode of the URL, as pg reads the last one', () => {
    expect(explicitTlsMode(`${HOST}?sslmode=verify-full&sslmode=require`)).toBe(
      `${HOST}?sslmode=verify-full&sslmode=verify-full`,
    );
  });
});

describe(tlsModeWarning.name, () => {
  it('says in one line, without the URL, that sslmode=require is verified as verify-full', () => {
    expect(tlsModeWarning(`${HOST}?sslmode=require`)).toBe(
      "DATABASE_URL: sslmode=require is taken as sslmode=verify-full (pg's meaning of it): the " +
        "server's certificate is verified, against Node's CA list or the URL's sslrootcert; write " +
        'sslmode=verify-full to say so, or sslmode=no-verify to encrypt without verifying',
    );
  });

  it('says nothing of a URL whose TLS is explicit, or of no URL', () => {
    expect(tlsModeWarning(`${HOST}?sslmode=verify-full`)).toBeUndefined();
    expect(tlsModeWarning(undefined)).toBeUndefined();
  });
});

describe(pgSslModeProblem.name, () => {
  /** pg's TLS settings for `url` with PGSSLMODE set to `mode` (unset when undefined). */
  const sslWith = (url: string, mode: string | undefined): unknown => {
    const before = process.env.PGSSLMODE;
    if (mode === undefined) delete process.env.PGSSLMODE;
    else process.env.PGSSLMODE = mode;
    try {
      return parsedByPg(url).ssl;
    } finally {
      if (before === undefined) delete process.env.PGSSLMODE;
      else process.env.PGSSLMODE = before;
    }
  };

  // Refused exactly where pg obeys it: where its TLS settings differ from those without it.
  // sslrootcert names a file pg reads: this one.
  it.each([
    HOST,
    `${HOST}?application_name=x`,
    `${HOST}?sslmode=`,
    `${HOST}?sslmode=disable`,
    `${HOST}?sslmode=verify-full`,
    `${HOST}?sslmode=no-verify`,
    `${HOST}?sslmode=verify-full&sslmode=`,
    `${HOST}?ssl=true`,
    `${HOST}?ssl=0`,
    `${HOST}?ssl=`,
    `${HOST}?sslrootcert=${encodeURIComponent(__filename)}`,
    `${HOST}?sslnegotiation=direct`,
    'postgresql:///gateway?host=/run/postgresql',
  ])('refuses PGSSLMODE=no-verify where pg obeys it: %s', (url) => {
    const obeyed =
      JSON.stringify(sslWith(url, 'no-verify')) !== JSON.stringify(sslWith(url, undefined));
    expect(sslWith(url, 'no-verify')).toEqual(
      obeyed ? { rejectUnauthorized: false } : expect.anything(),
    );
    expect(pgSslModeProblem(url, 'no-verify') !== undefined).toBe(obeyed);
  });

  it('leaves the other modes, and no PGSSLMODE, to pg: they verify or turn TLS off', () => {
    for (const mode of ['require', 'prefer', 'verify-ca', 'verify-full'])
      expect(sslWith(HOST, mode)).toBe(true);
    expect(sslWith(HOST, 'disable')).toBe(false);
    for (const mode of [undefined, 'require', 'disable', ' no-verify'])
      expect(pgSslModeProblem(HOST, mode)).toBeUndefined();
    expect(pgSslModeProblem(undefined, 'no-verify')).toMatch(/^PGSSLMODE: no-verify /);
  });
});
