import { readFileSync, readdirSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { configWarnings } from './config-warnings';
import { ConfigError, loadConfig } from './load-config';
import { problemsOf } from '../../test/support/config-problems';
import { HOUR_MS } from '../common/clock/durations';
import { getMetadataStorage } from 'class-validator';
import {
  EnvironmentVariables,
  MIN_DATABASE_POOL_SIZE,
  PERIODIC_JOBS,
} from './environment-variables';

const PRODUCTION = {
  NODE_ENV: 'production',
  MASTER_KEY: 'a-long-enough-master-key',
  DATABASE_URL: 'postgres://gateway@127.0.0.1:5432/gateway',
  SUBTENSOR_URL: 'wss://entrypoint-finney.opentensor.ai:443',
};
const NO_SOURCE_IN_PRODUCTION =
  'SUBTENSOR_URL, METAGRAPH_FILE: one is required when NODE_ENV=production ' +
  '(SUBTENSOR_URL=wss://entrypoint-finney.opentensor.ai:443 reads subnet NETUID from the chain)';
const LOOPBACK = { publicUnicast: false, cidrs: ['127.0.0.0/8', '::1/128'] };

/** Why a service URL that does not parse is refused (service-url.ts), quoting none of it. */
const PARSE_FAILURE =
  'it does not parse as a URL (a port is a number up to 65535; a reserved character in the ' +
  'user name or password is percent-encoded)';
const BAD_ESCAPE = 'its user name or password holds a % that begins no escape (write % as %25)';

describe(loadConfig.name, () => {
  it('starts in development with no variables at all', () => {
    const config = loadConfig({});
    expect(config).toMatchObject({
      nodeEnv: 'development',
      port: 3000,
      netuid: 13,
      databaseUrl: undefined,
      redisUrl: undefined,
      redisKeyPrefix: 'gateway:',
    });
    expect(config.rateLimits).toEqual({
      regularPerWindow: 100,
      validatorPerWindow: 1000,
      windowSeconds: 3600,
    });
  });

  // The README's Configuration table promises these: a default changed in the schema changes
  // every deployment that leaves the variable unset, and no other test would say so.
  it("starts with the defaults the README's Configuration table gives", () => {
    const config = loadConfig({});
    expect(config).toMatchObject({
      host: '0.0.0.0',
      dataDir: './.data',
      embeddedPostgresPort: 54329,
      logLevel: 'info',
      bodyLimit: '1mb',
      corsOrigins: [],
      shutdownTimeoutMs: 10_000,
      httpServer: {
        headersTimeoutMs: 20_000,
        requestTimeoutMs: 60_000,
        keepAliveTimeoutMs: 65_000,
      },
      auth: { failureLimit: 20, failureWindowSeconds: 60, keyCacheTtlMs: 500 },
      database: { poolSize: 10, statementTimeoutMs: 15_000, connectTimeoutMs: 5000 },
      desirability: { maxJobs: 256, maxActiveTasks: 1000 },
      repos: { hfResultsPath: undefined },
      defaultDesirabilitiesFile: 'config/default-desirabilities.json',
      tasks: {
        collectIntervalMs: 3_600_000,
        collectLimit: 100,
        collectPerMinute: 20,
        collectConcurrency: 2,
        budgetReserve: 0.5,
        tickMs: 60_000,
        maxCompileAttempts: 3,
        downloadStallTimeoutMs: 60_000,
      },
    });
    expect(config.network).toMatchObject({
      devnetStoredOnly: false,
      minersPerQuery: 5,
      quorum: 3,
      queryDeadlineMs: 10_000,
      queryCacheTtlSeconds: 60,
      onDemandMode: 'auto',
      storedCurrentHourTtlMs: 300_000,
      minerMaxResponseBytes: 16_777_216,
      minerMaxIndexResponseBytes: 100_663_296,
      minerConcurrency: 8,
      breakerFailures: 3,
      breakerCooldownMs: 30_000,
      credibilityAlpha: 0.2,
      bucketFetchTimeoutMs: 140_000,
      indexSync: {
        intervalMs: 3_900_000,
        onStart: true,
        concurrency: 4,
        fetchTimeoutMs: 120_000,
        spotChecks: 5,
        spotCheckReserve: 0.5,
      },
    });
  });

  // Each bound from both sides: the last value taken and the first refused, with a problem that
  // names the variable. A bound moved by one, or a rule dropped, lets an operator's typo start.
  it.each([
    ['PORT', '65535', '65536'],
    ['NODE_ENV', 'test', 'staging'],
    ['MASTER_KEY', 'k'.repeat(16), 'k'.repeat(15)],
    ['METRICS_TOKEN', 'm'.repeat(16), 'm'.repeat(15)],
    // Secrets sent in a header: as long as the guard looks up, and as a header carries them.
    ['MASTER_KEY', 'k'.repeat(256), 'k'.repeat(257)],
    ['METRICS_TOKEN', 'm'.repeat(256), 'm'.repeat(257)],
    // (White space at the ends is trimmed from every setting, the secrets' too.)
    ['MASTER_KEY', 'inner spaces are kept!', 'no-tab-\there-or-anywhere'],
    ['MASTER_KEY', '~!"#$%&()*+,-./09:;<=>?@AZ[]^_`az{|}', 'no-non-ascii-é-characters'],
    ['MASTER_KEY', 'k'.repeat(16), 'ключ-ключ-ключ-ключ'],
    ['METRICS_TOKEN', 'm'.repeat(16), 'tab\tinside-the-token'],
    ['GRAVITY_TOKEN', 'g'.repeat(8), 'g'.repeat(7)],
    ['REDIS_KEY_PREFIX', 'p'.repeat(64), 'p'.repeat(65)],
    ['REDIS_KEY_PREFIX', 'team-1.gateway:', 'team/gateway:'],
    ['VALIDATOR_HOTKEY', 'h'.repeat(66), 'h'.repeat(67)],
    ['SHUTDOWN_TIMEOUT_MS', '600000', '600001'],
    ['KEY_CACHE_TTL_MS', '60000', '60001'],
    ['DESIRABILITY_SYNC_INTERVAL', '86400', '86401'],
    ['METAGRAPH_SYNC_INTERVAL', '12', '11'],
    ['DEVNET_MINERS', '64', '65'],
    ['MINER_CALL_BUDGET_MARGIN_SECONDS', '3600', '3601'],
    ['CREDIBILITY_ALPHA', '0.01', '0'],
    ['TASK_COLLECT_LIMIT', '1000', '1001'],
    ['QUERY_MINERS', '64', '65'],
    ['QUERY_DEADLINE_MS', '120000', '120001'],
    ['HTTP_HEADERS_TIMEOUT_MS', '1000', '999'],
    ['DOWNLOAD_STALL_TIMEOUT_MS', '1000', '999'],
    ['EMBEDDED_POSTGRES_PORT', '1', '0'],
    ['DATABASE_STATEMENT_TIMEOUT_MS', '100', '99'],
    ['DATABASE_POOL_SIZE', '5', '4'],
    ['DESIRABILITY_MAX_JOBS', '100000', '100001'],
    ['ON_DEMAND_MODE', 'stored', 'fast'],
    ['LOG_LEVEL', 'silent', 'verbose'],
    ['GRAVITY_BRANCH', 'votes/v1.2', 'votes..main'],
    ['GRAVITY_BRANCH', 'votes/v1.2', 'votes/'],
    ['GRAVITY_BRANCH', 'votes/v1.2', 'main.'],
    ['HF_RESULTS_PATH', 'results.ndjson', 'results.csv.bak'],
    ['DEFAULT_DESIRABILITIES_FILE', 'config/votes.json', 'config/votes.yaml'],
  ])('takes %s=%s and refuses %s, naming the variable', (name, taken, refused) => {
    expect(problemsOf({ [name]: taken })).toEqual([]);
    expect(problemsOf({ [name]: refused })).toEqual([
      expect.stringMatching(new RegExp(`^${name}: `)),
    ]);
  });

  it('trusts no proxy by default, and reads TRUST_PROXY in the forms Express takes', () => {
    expect(loadConfig({}).trustProxy).toBe(false);
    expect(loadConfig({ TRUST_PROXY: 'false' }).trustProxy).toBe(false);
    expect(loadConfig({ TRUST_PROXY: '0' }).trustProxy).toBe(false);
    expect(loadConfig({ TRUST_PROXY: '2' }).trustProxy).toBe(2);
    // A value quoted with its spaces in .env is still a hop count; 64 is the most taken.
    expect(loadConfig({ TRUST_PROXY: ' 1 ' }).trustProxy).toBe(1);
    expect(loadConfig({ TRUST_PROXY: '64' }).trustProxy).toBe(64);
    expect(
      loadConfig({ TRUST_PROXY: 'loopback, 10.0.0.0/8,2001:db8::1, 192.168.0.0/255.255.0.0' })
        .trustProxy,
    ).toEqual(['loopback', '10.0.0.0/8', '2001:db8::1', '192.168.0.0/255.255.0.0']);
    expect(
      loadConfig({ TRUST_PROXY: 'linklocal,uniquelocal,fd00::/8,::ffff:10.0.0.1,192.168.1.1' })
        .trustProxy,
    ).toEqual(['linklocal', 'uniquelocal', 'fd00::/8', '::ffff:10.0.0.1', '192.168.1.1']);
  });

  it('refuses a TRUST_PROXY Express would not read, and true (anyone could fake their address)', () => {
    const guide =
      'give false, a hop count, or comma-separated addresses, CIDRs, loopback, linklocal or uniquelocal';
    expect(problemsOf({ TRUST_PROXY: 'loopback, the-balancer' })).toEqual([
      `TRUST_PROXY: invalid IP address: the-balancer: ${guide}`,
    ]);
    expect(problemsOf({ TRUST_PROXY: '10.0.0.0/33' })).toEqual([
      `TRUST_PROXY: invalid range on address: 10.0.0.0/33: ${guide}`,
    ]);
    // A configuration audit's: each bad entry is named at once, and ranges as wide as `true`
    // (trusting every IPv4 peer) are refused as it is.
    expect(problemsOf({ TRUST_PROXY: '10.0.0.1/33,0x1, 0.0.0.0/1,128.0.0.0/1' })).toEqual([
      'TRUST_PROXY: invalid range on address: 10.0.0.1/33; invalid IP address: 0x1 (an IPv4 ' +
        'address is four decimal numbers, as 10.0.0.1); 0.0.0.0/1 is wider than a /8: it takes ' +
        'in public addresses, whose clients could then choose their own address; 128.0.0.0/1 ' +
        'is wider than a /8: it takes in public addresses, whose clients could then choose ' +
        `their own address: ${guide}`,
    ]);
    expect(problemsOf({ TRUST_PROXY: '::/0' })).toEqual([
      'TRUST_PROXY: ::/0 is wider than a /7: it takes in public addresses, whose clients could ' +
        `then choose their own address: ${guide}`,
    ]);
    expect(problemsOf({ TRUST_PROXY: '10.0.0.0/128.0.0.0' })).toHaveLength(1);
    // proxy-addr reads an IPv4-mapped range as the IPv4 one (a review's finding: /96 trusted all).
    for (const entry of ['::ffff:0.0.0.0/96', '::ffff:0:0/96', '::ffff:128.0.0.0/97'])
      expect(problemsOf({ TRUST_PROXY: entry })).toEqual([
        `TRUST_PROXY: ${entry} is wider than an IPv4 /8: it takes in public addresses, whose ` +
          `clients could then choose their own address: ${guide}`,
      ]);
    expect(loadConfig({ TRUST_PROXY: '::ffff:10.0.0.0/104' }).trustProxy).toEqual([
      '::ffff:10.0.0.0/104',
    ]);
    expect(
      loadConfig({ TRUST_PROXY: '10.0.0.0/8,fc00::/7,10.0.0.0/255.0.0.0' }).trustProxy,
    ).toEqual(['10.0.0.0/8', 'fc00::/7', '10.0.0.0/255.0.0.0']);
    expect(problemsOf({ TRUST_PROXY: 'loopback,' })).toEqual([
      'TRUST_PROXY: an empty entry in the list (two commas, or one at an end)',
    ]);
    expect(problemsOf({ TRUST_PROXY: '65' })).toEqual([
      'TRUST_PROXY: 65 hops: give at most 64 (usually 1, the load balancer)',
    ]);
    // proxy-addr reads 0x1 as 0.0.0.1 and 010.0.0.1 as 8.0.0.1: no address an operator means.
    for (const entry of [
      '0x1',
      '010.0.0.1',
      '0xa.0.0.1',
      '::ffff:010.0.0.1',
      '10.0.0.0/0255.0.0.0',
      // ipaddr.js reads a netmask of one hex number as an address: 10.0.0.0/8.
      '10.0.0.0/0xff000000',
    ])
      expect(problemsOf({ TRUST_PROXY: `loopback,${entry}` })).toEqual([
        expect.stringMatching(/^TRUST_PROXY: invalid (IP address|range on address): /),
      ]);
    for (const address of ['0x1', '0xa.0.0.1'])
      expect(problemsOf({ TRUST_PROXY: address })).toEqual([
        `TRUST_PROXY: invalid IP address: ${address} (an IPv4 address is four decimal numbers, as 10.0.0.1): ${guide}`,
      ]);
    // What is written as proxy-addr reads it still is.
    expect(problemsOf({ TRUST_PROXY: '10.0.0.0/8,10.1.0.0/255.255.0.0,fd00::/8' })).toEqual([]);
    expect(problemsOf({ TRUST_PROXY: 'true' })).toEqual([
      expect.stringMatching(/^TRUST_PROXY: true would trust X-Forwarded-For from anyone/),
    ]);
  });

  it('reads the network votes settings, local by default, and refuses bad ones', () => {
    const defaults = loadConfig({});
    expect(defaults.gravity).toEqual({ repoUrl: undefined, branch: 'main', token: undefined });
    expect(defaults.desirability.syncIntervalMs).toBe(1_200_000);
    const set = loadConfig({
      GRAVITY_REPO_URL: 'https://github.com/macrocosm-os/gravity',
      GRAVITY_TOKEN: 'ghp_0123456789abcdef',
      DESIRABILITY_SYNC_INTERVAL: '60',
    });
    expect(set.gravity.repoUrl).toBe('https://github.com/macrocosm-os/gravity');
    expect(set.desirability.syncIntervalMs).toBe(60_000);
    expect(
      problemsOf({
        GRAVITY_REPO_URL: 'git@github.com:macrocosm-os/gravity.git',
        GRAVITY_BRANCH: '--upload-pack=x',
        DESIRABILITY_SYNC_INTERVAL: '0',
      }),
    ).toEqual([
      expect.stringMatching(/^GRAVITY_REPO_URL: must be an https:\/\/ URL/),
      'GRAVITY_BRANCH: must be a git branch name',
      'DESIRABILITY_SYNC_INTERVAL: must not be less than 1',
    ]);
  });

  it('refuses production without a master key, a database or a metagraph source, naming each', () => {
    expect(problemsOf({ NODE_ENV: 'production' })).toEqual([
      'MASTER_KEY: required when NODE_ENV=production',
      'DATABASE_URL: required when NODE_ENV=production',
      NO_SOURCE_IN_PRODUCTION,
    ]);
  });

  it('says that an empty SUBTENSOR_URL sets no source, as an .env from before 2026-11-30 has it', () => {
    // docker-compose takes the public entrypoint only when .env does not set SUBTENSOR_URL at
    // all; the sample .env of those releases held `SUBTENSOR_URL=` uncommented.
    const problems = problemsOf({ ...PRODUCTION, SUBTENSOR_URL: '' });
    expect(problems).toEqual([expect.stringContaining(NO_SOURCE_IN_PRODUCTION)]);
    expect(problems[0]).toContain(
      'SUBTENSOR_URL is set but empty, which sets no source: remove the line from .env',
    );
    const { SUBTENSOR_URL: _unset, ...withoutSource } = PRODUCTION;
    expect(problemsOf(withoutSource)).toEqual([NO_SOURCE_IN_PRODUCTION]);
  });

  describe('metagraph source', () => {
    it('reads the chain settings with their defaults', () => {
      expect(loadConfig(PRODUCTION).network).toMatchObject({
        metagraphFile: undefined,
        subtensor: {
          url: 'wss://entrypoint-finney.opentensor.ai:443',
          syncIntervalMs: 300_000,
          timeoutMs: 30_000,
        },
        devnetMiners: 0,
      });
    });

    it('refuses both sources at once', () => {
      expect(
        problemsOf({ SUBTENSOR_URL: 'ws://127.0.0.1:9944', METAGRAPH_FILE: '/tmp/metagraph.json' }),
      ).toEqual(['SUBTENSOR_URL, METAGRAPH_FILE: set one metagraph source, not both']);
    });

    it.each([
      ['http://127.0.0.1:9944', 'its scheme is another'],
      ['ws://', PARSE_FAILURE],
      ['finney', PARSE_FAILURE],
    ])('refuses SUBTENSOR_URL=%s, saying why', (url, why) => {
      expect(problemsOf({ SUBTENSOR_URL: url })).toEqual([
        `SUBTENSOR_URL: must be a ws:// or wss:// URL of a subtensor node: ${why}`,
      ]);
    });

    it.each([
      ['development', {}, 8],
      ['test', { NODE_ENV: 'test' }, 0],
      ['development with a chain', { SUBTENSOR_URL: 'ws://127.0.0.1:9944' }, 0],
      ['development with a file', { METAGRAPH_FILE: '/tmp/metagraph.json' }, 0],
      ['test when asked by name', { NODE_ENV: 'test', DEVNET_MINERS: '4' }, 4],
    ])('starts simulated miners in %s: %s', (_, env, miners) => {
      expect(loadConfig(env as Record<string, string>).network.devnetMiners).toBe(miners);
    });

    it('refuses DEVNET_MINERS in production: the devnet is not in the production build', () => {
      expect(problemsOf({ ...PRODUCTION, SUBTENSOR_URL: '', DEVNET_MINERS: '4' })).toEqual([
        'DEVNET_MINERS: production never starts the simulated devnet; run it on its own ' +
          '(`npm run devnet -- --metagraph <file>`) and set METAGRAPH_FILE to its metagraph',
      ]);
      expect(loadConfig({ ...PRODUCTION, DEVNET_MINERS: '0' }).network.devnetMiners).toBe(0);
    });
  });

  it('starts in production without VALIDATOR_HOTKEY: the key comes from the wallet', () => {
    const config = loadConfig(PRODUCTION);

    expect(config.nodeEnv).toBe('production');
    expect(config.validatorKey).toEqual({
      uri: undefined,
      expectedHotkey: undefined,
      wallet: {
        path: join(homedir(), '.bittensor', 'wallets'),
        name: 'default',
        hotkey: 'default',
        explicit: false,
      },
    });
  });

  it('reports every malformed variable at once', () => {
    const problems = problemsOf({
      PORT: 'eighty',
      DATABASE_URL: 'mysql://x',
      RATE_LIMIT_REGULAR: '0',
      MASTER_KEY: 'short',
    });
    expect(problems).toEqual(
      expect.arrayContaining([
        expect.stringMatching(/^PORT: /),
        'DATABASE_URL: must be a postgres:// or postgresql:// URL: its scheme is another',
        expect.stringMatching(/^RATE_LIMIT_REGULAR: /),
        'MASTER_KEY: must be at least 16 characters (use a long random value)',
      ]),
    );
  });

  // Such URLs passed, and their clients failed at start with the URL, password and all, in a
  // stack on stderr, never naming the variable (an operator audit).
  it.each([
    [
      'REDIS_URL',
      'redis://:Secret-Pw-1@127.0.0.1:notaport',
      'a redis:// or rediss:// URL',
      PARSE_FAILURE,
    ],
    // A review's finding: the port out of range was told only that it must be a redis:// URL.
    [
      'REDIS_URL',
      'redis://:Secret-Pw-1@127.0.0.1:99999',
      'a redis:// or rediss:// URL',
      PARSE_FAILURE,
    ],
    ['REDIS_URL', 'redis://', 'a redis:// or rediss:// URL', 'it names no host'],
    [
      'REDIS_URL',
      'http://:Secret-Pw-1@127.0.0.1:6379',
      'a redis:// or rediss:// URL',
      'its scheme is another',
    ],
    // Written without its scheme, the user name would be read as one: it is not named.
    ['DATABASE_URL', 'secret-user:Secret-Pw-1@db:5432/x', 'a postgres://', 'its scheme is another'],
    [
      'DATABASE_URL',
      'postgres://postgres:Secret-Pw-1@127.0.0.1:notaport/db',
      'a postgres://',
      PARSE_FAILURE,
    ],
    [
      'DATABASE_URL',
      'postgres://postgres:Secret%Pw-1@127.0.0.1:5432/db',
      'a postgres://',
      BAD_ESCAPE,
    ],
    [
      'DATABASE_URL',
      'postgres://gate%way:Secret-Pw-1@127.0.0.1:5432/db',
      'a postgres://',
      BAD_ESCAPE,
    ],
    ['SUBTENSOR_URL', 'ws://127.0.0.1:notaport', 'a ws:// or wss:// URL', PARSE_FAILURE],
    // A configuration audit's: ioredis sent `SELECT NaN` and the start died naming nothing; `/1.5`
    // was read as database 1. pg died on a port parameter with a stack.
    ...['/abc', '/1.5', '/15/x', '/%2015'].map((path) => [
      'REDIS_URL',
      `redis://:Secret-Pw-1@127.0.0.1:6379${path}`,
      'a redis:// or rediss:// URL',
      'its path is no database number (`/0`, `/1`, …)',
    ]),
    [
      'REDIS_URL',
      'redis://:Secret-Pw-1@127.0.0.1:6379?db=abc',
      'a redis:// or rediss:// URL',
      'its db parameter is no database number',
    ],
    [
      'DATABASE_URL',
      'postgres://postgres:Secret-Pw-1@127.0.0.1/db?port=abc',
      'a postgres://',
      'its port parameter is no number',
    ],
  ])('refuses %s=%s, naming the variable and why, and not the value', (name, url, words, why) => {
    const problems = problemsOf({ [name]: url });
    expect(problems).toEqual([expect.stringMatching(`^${name}: must be ${words}.*: `)]);
    expect(problems[0].endsWith(`: ${why}`)).toBe(true);
    expect(problems.join('')).not.toMatch(/secret/i);
  });

  it.each(['0b', '1023b', '0kb', '0MB'])(
    'refuses BODY_LIMIT=%s, which refuses every body',
    (limit) => {
      expect(problemsOf({ BODY_LIMIT: limit })).toEqual([
        'BODY_LIMIT: must be at least 1kb (a smaller limit refuses ordinary requests with 413)',
      ]);
    },
  );

  it.each(['1024b', '1kb', '2MB'])('takes BODY_LIMIT=%s', (limit) => {
    expect(problemsOf({ BODY_LIMIT: limit })).toEqual([]);
  });

  it('takes a Redis URL over TLS (rediss://)', () => {
    expect(problemsOf({ REDIS_URL: 'rediss://:Secret-Pw-1@redis.example:6380' })).toEqual([]);
  });

  // pg obeys PGSSLMODE when the URL says nothing of TLS: no-verify encrypted without verifying
  // the certificate, unseen in DATABASE_URL, which README said was always verified unless the
  // URL said no-verify (a docs audit's finding).
  it('refuses PGSSLMODE=no-verify when DATABASE_URL leaves TLS to it', () => {
    const url = 'postgres://gateway@db.example.com:5432/gateway';
    expect(problemsOf({ DATABASE_URL: url, PGSSLMODE: 'no-verify' })).toEqual([
      expect.stringMatching(/^PGSSLMODE: no-verify would have pg encrypt without verifying /),
    ]);
    expect(problemsOf({ PGSSLMODE: 'no-verify' })).toHaveLength(1);
    // The URL's own TLS settings win over it; the other modes verify (or turn TLS off).
    expect(
      problemsOf({ DATABASE_URL: `${url}?sslmode=verify-full`, PGSSLMODE: 'no-verify' }),
    ).toEqual([]);
    for (const mode of ['require', 'prefer', 'verify-ca', 'verify-full', 'disable'])
      expect(problemsOf({ DATABASE_URL: url, PGSSLMODE: mode })).toEqual([]);
  });

  it('takes a Postgres URL that names a socket rather than a host', () => {
    expect(problemsOf({ DATABASE_URL: 'postgresql:///gateway?host=/run/postgresql' })).toEqual([]);
  });

  // The operator reads them on stderr at start (README, "Logs"): one line per setting.
  it('says each problem on a line of its own', () => {
    expect(() => loadConfig({ PORT: 'eighty', LOG_LEVEL: 'loud' })).toThrow(
      new ConfigError([
        'PORT: must be an integer port number',
        'LOG_LEVEL: must be one of the following values: fatal, error, warn, info, debug, trace, silent',
      ]),
    );
    expect(new ConfigError(['A: one', 'B: two']).message).toBe(
      'Invalid configuration:\n  - A: one\n  - B: two',
    );
  });

  it('says a number that is not one is not, and nothing more', () => {
    expect(problemsOf({ RATE_LIMIT_REGULAR: 'abc', CREDIBILITY_ALPHA: 'x' })).toEqual([
      'RATE_LIMIT_REGULAR: must be an integer number',
      'CREDIBILITY_ALPHA: must be a number',
    ]);
  });

  it('refuses the sample master key of .env.example in production, saying how to make one', () => {
    expect(problemsOf({ ...PRODUCTION, MASTER_KEY: 'change-me-to-a-long-random-string' })).toEqual([
      'MASTER_KEY: the sample value of .env.example is public, refused when NODE_ENV=production; generate one: openssl rand -hex 32',
    ]);
    expect(loadConfig({ MASTER_KEY: 'change-me-to-a-long-random-string' }).masterKey).toBe(
      'change-me-to-a-long-random-string',
    );
  });

  it('reads numbers and lists from their string form', () => {
    const config = loadConfig({
      PORT: '8080',
      RATE_LIMIT_REGULAR: '5',
      CORS_ORIGINS: 'https://a.example, https://b.example',
    });
    expect(config.port).toBe(8080);
    expect(config.rateLimits.regularPerWindow).toBe(5);
    expect(config.corsOrigins).toEqual(['https://a.example', 'https://b.example']);
    // A trailing or doubled comma names no origin.
    expect(loadConfig({ CORS_ORIGINS: 'https://a.example,, ' }).corsOrigins).toEqual([
      'https://a.example',
    ]);
  });

  // CORS was silently off: the cors package compares Origin with each entry as a string.
  // Node's server refuses that pair at construction, but not set as properties, as they are.
  it('refuses a headers timeout longer than the request timeout, which would never apply', () => {
    expect(problemsOf({ HTTP_HEADERS_TIMEOUT_MS: '60001' })).toEqual([
      'HTTP_HEADERS_TIMEOUT_MS: 60001 is longer than HTTP_REQUEST_TIMEOUT_MS (60000), which bounds ' +
        'the headers too, so it would never apply; set it at most HTTP_REQUEST_TIMEOUT_MS',
    ]);
    expect(
      loadConfig({ HTTP_HEADERS_TIMEOUT_MS: '30000', HTTP_REQUEST_TIMEOUT_MS: '30000' }).httpServer,
    ).toMatchObject({ headersTimeoutMs: 30_000, requestTimeoutMs: 30_000 });
    // A value that is no number says that alone.
    expect(problemsOf({ HTTP_REQUEST_TIMEOUT_MS: 'abc' })).toEqual([
      'HTTP_REQUEST_TIMEOUT_MS: must be an integer number',
    ]);
  });

  // A setting out of its own range was also compared with its neighbours: the start said
  // "HTTP_HEADERS_TIMEOUT_MS: 20000 is longer than HTTP_REQUEST_TIMEOUT_MS (0)" of a default
  // beside the setting at fault, or "set it at least 200000239998" of a lease from a timeout
  // already refused. One line, naming the setting the operator got wrong, is what they act on.
  it.each([
    [{ HTTP_REQUEST_TIMEOUT_MS: '0' }, 'HTTP_REQUEST_TIMEOUT_MS: must not be less than 1000'],
    [{ INDEX_SYNC_INTERVAL: '0' }, 'INDEX_SYNC_INTERVAL: must not be less than 10'],
    [
      { MINER_CALL_BUDGET_MARGIN_SECONDS: '99999999999' },
      'MINER_CALL_BUDGET_MARGIN_SECONDS: must not be greater than 3600',
    ],
    [
      { ...PRODUCTION, MINER_CALL_BUDGET_MARGIN_SECONDS: '-5' },
      'MINER_CALL_BUDGET_MARGIN_SECONDS: must not be less than 0',
    ],
    [
      { ...PRODUCTION, GRAVITY_REPO_URL: 'https://github.com/a/b', PUBLICATION_LEASE_MS: '0' },
      'PUBLICATION_LEASE_MS: must not be less than 1000',
    ],
    [
      {
        ...PRODUCTION,
        GRAVITY_REPO_URL: 'https://github.com/a/b',
        SUBTENSOR_TIMEOUT_MS: '99999999999',
      },
      'SUBTENSOR_TIMEOUT_MS: must be at most 2147483647 ms (about 24.8 days), the longest timer Node keeps',
    ],
  ])('a value its own rule refuses is one line, not compared with others (%j)', (env, line) => {
    expect(problemsOf(env)).toEqual([line]);
  });

  // Read with Number(), PORT=0x10 was port 16 and NETUID=0b1101 subnet 13, nothing said.
  it('reads an integer setting in decimal digits only', () => {
    expect(problemsOf({ PORT: '0x10', NETUID: '0b1101', RATE_LIMIT_REGULAR: '1e3' })).toEqual([
      'PORT: must be an integer port number',
      'NETUID: must be an integer number',
      'RATE_LIMIT_REGULAR: must be an integer number',
    ]);
    expect(problemsOf({ HTTP_REQUEST_TIMEOUT_MS: '1.5e4' })).toEqual([
      'HTTP_REQUEST_TIMEOUT_MS: must be an integer number',
    ]);
    const config = loadConfig({ PORT: ' 8080 ', NETUID: '+13' });
    expect(config.port).toBe(8080);
    expect(config.netuid).toBe(13);
  });

  // Read with Number(), VALIDATOR_MIN_STAKE=0x10 was 16 and 0b1 was 1, nothing said, while
  // 1_000 and Infinity were refused: a decimal setting is read as strictly as an integer one.
  it.each([
    'VALIDATOR_MIN_STAKE',
    'CREDIBILITY_ALPHA',
    'INDEX_SPOT_CHECK_RESERVE',
    'TASK_BUDGET_RESERVE',
  ])('reads %s in plain decimal notation only, refusing it without its value', (name) => {
    for (const value of [
      '0x10',
      '0b1',
      '0o7',
      '1e-1',
      '1E0',
      '1_000',
      'Infinity',
      '.5',
      '1.',
      '0.5.1',
    ]) {
      const problems = problemsOf({ [name]: value });
      expect(problems).toEqual([expect.stringMatching(new RegExp(`^${name}: must be a number`))]);
      expect(problems.join('')).not.toContain(value);
    }
    for (const [value, read] of [
      ['0.25', 0.25],
      ['+0.5', 0.5],
      ['1', 1],
      ['0', 0],
    ] as const)
      expect(problemsOf({ [name]: value, INDEX_SPOT_CHECKS: '1' })).toEqual(
        name === 'CREDIBILITY_ALPHA' && read === 0
          ? ['CREDIBILITY_ALPHA: must not be less than 0.01']
          : [],
      );
    expect(loadConfig({ VALIDATOR_MIN_STAKE: '+4096.25' }).network.validatorMinStake).toBe(4096.25);
  });

  // RATE_LIMIT_REGULAR=100000000000000000000000 was a budget of 1e23: digits past 2^53 name no
  // one number, and a class's budget is bounded as a key's own rate_limit is.
  it('refuses an integer setting beyond its range, and every one beyond Number.MAX_SAFE_INTEGER', () => {
    expect(problemsOf({ RATE_LIMIT_REGULAR: '100000000000000000000000' })).toEqual([
      'RATE_LIMIT_REGULAR: must not be greater than 1000000',
    ]);
    expect(problemsOf({ RATE_LIMIT_VALIDATOR: '1000001' })).toEqual([
      'RATE_LIMIT_VALIDATOR: must not be greater than 1000000',
    ]);
    expect(loadConfig({ RATE_LIMIT_REGULAR: '1000000' }).rateLimits.regularPerWindow).toBe(
      1_000_000,
    );
    const integers = getMetadataStorage()
      .getTargetValidationMetadatas(EnvironmentVariables, '', true, false)
      .filter((entry) => entry.name === 'isInt')
      .map((entry) => entry.propertyName);
    expect(integers.length).toBeGreaterThan(40);
    for (const name of integers)
      expect([name, problemsOf({ [name]: '9007199254740992' })]).toEqual([
        name,
        [expect.stringMatching(new RegExp(`^${name}: must (not be greater than|be at most) \\d+`))],
      ]);
  });

  // Removing TASK_BUDGET_RESERVE's or CREDIBILITY_ALPHA's @Max(1) went unnoticed (a mutation
  // audit's finding): the loop above reaches integer settings only.
  it('refuses every number setting just over its maximum, fractional ones too', () => {
    const metadata = getMetadataStorage().getTargetValidationMetadatas(
      EnvironmentVariables,
      '',
      true,
      false,
    );
    const decimals = new Set(
      metadata.filter((entry) => entry.name === 'isNumber').map((entry) => entry.propertyName),
    );
    const maxima = metadata.filter((entry) => entry.name === 'max');
    expect(maxima.length).toBeGreaterThan(20);
    // Every fractional setting is a share or a rate, but for a stake weight, which has no bound.
    const bounded = new Set(maxima.map((entry) => entry.propertyName));
    expect([...decimals].filter((name) => !bounded.has(name))).toEqual(['VALIDATOR_MIN_STAKE']);
    for (const { propertyName: name, constraints, message } of maxima) {
      const max = constraints[0] as number;
      const over = decimals.has(name) ? max + 0.01 : max + 1;
      const said = typeof message === 'string' ? message : `must not be greater than ${max}`;
      expect([name, problemsOf({ [name]: String(over) })]).toEqual([name, [`${name}: ${said}`]]);
    }
  });

  // BODY_LIMIT=" 1mb" was refused while PORT=" 3000 " was port 3000 (dotenv keeps the spaces
  // inside quotes): every setting is read without the white space at its ends.
  it('reads every setting without the white space at its ends', () => {
    const config = loadConfig({
      BODY_LIMIT: ' 1mb',
      PORT: ' 3000 ',
      HOST: '\t127.0.0.1 ',
      LOG_LEVEL: 'debug ',
      NODE_ENV: ' test',
      CREDIBILITY_ALPHA: ' 0.5 ',
      MASTER_KEY: ' 0123456789abcdef0123 ',
      TRUST_PROXY: ' loopback ',
      INDEX_SYNC_ON_START: 'false\n',
      DATA_DIR: ' /tmp/gateway-data ',
    });
    expect(config).toMatchObject({
      bodyLimit: '1mb',
      port: 3000,
      host: '127.0.0.1',
      logLevel: 'debug',
      nodeEnv: 'test',
      masterKey: '0123456789abcdef0123',
      trustProxy: ['loopback'],
      dataDir: '/tmp/gateway-data',
    });
    expect(config.network.credibilityAlpha).toBe(0.5);
    expect(config.network.indexSync.onStart).toBe(false);
  });

  it('refuses a NETUID the chain cannot hold (a u16)', () => {
    expect(problemsOf({ NETUID: '70000' })).toEqual([
      'NETUID: must be at most 65535 (a subnet id is a 16-bit number on chain)',
    ]);
    expect(loadConfig({ NETUID: '65535' }).netuid).toBe(65535);
  });

  it('takes a value of spaces alone as unset, as an empty one, not as 0', () => {
    const config = loadConfig({
      NETUID: ' ',
      PORT: '  ',
      VALIDATOR_MIN_STAKE: '\t',
      INDEX_SYNC_INTERVAL: ' \t ',
      HOST: ' ',
    });
    expect(config).toMatchObject({ netuid: 13, port: 3000, host: '0.0.0.0' });
    expect(config.network.validatorMinStake).toBe(10_000);
    expect(config.network.indexSync.intervalMs).toBe(3_900_000);
    expect(problemsOf({ ...PRODUCTION, MASTER_KEY: '   ' })).toEqual([
      'MASTER_KEY: required when NODE_ENV=production',
    ]);
  });

  it('refuses CORS_ORIGINS that no browser origin equals, and *', () => {
    expect(problemsOf({ CORS_ORIGINS: 'https://app.example.com/' })).toEqual([
      'CORS_ORIGINS: entry 1 is not an origin as a browser sends it: http(s)://host[:port] in lower case, ' +
        'without a path, a trailing slash or the default port (https://app.example.com?)',
    ]);
    expect(problemsOf({ CORS_ORIGINS: '*' })).toEqual([
      'CORS_ORIGINS: entry 1: no wildcard (*) is taken: list the origins browsers may call from, comma-separated (https://app.example.com)',
    ]);
  });

  it('lowers a QUERY_QUORUM larger than QUERY_MINERS to it, as the README says', () => {
    const { network } = loadConfig({ QUERY_MINERS: '3', QUERY_QUORUM: '5' });
    expect(network).toMatchObject({ minersPerQuery: 3, quorum: 3 });
  });

  // The wait doubles from PUBLICATION_RETRY_MS up to the longest: a longest below the first
  // would shorten the first wait rather than bound the doubling.
  it('raises a PUBLICATION_RETRY_MAX_MS below PUBLICATION_RETRY_MS to it', () => {
    const { publication } = loadConfig({
      PUBLICATION_RETRY_MS: '60000',
      PUBLICATION_RETRY_MAX_MS: '1000',
    });
    expect(publication).toMatchObject({ retryMs: 60_000, retryMaxMs: 60_000 });
  });

  it('reads the task settings, seconds as milliseconds', () => {
    const { tasks } = loadConfig({
      TASK_COLLECT_INTERVAL: '600',
      TASK_LIFECYCLE_TICK: '30',
      TASK_BUDGET_RESERVE: '0.25',
      INDEX_SPOT_CHECK_RESERVE: '0.75',
    });
    expect(tasks).toMatchObject({
      collectIntervalMs: 600_000,
      tickMs: 30_000,
      budgetReserve: 0.25,
    });
  });

  // A review's finding: RATE_LIMIT_WINDOW_SECONDS=100000000000000 started, and every count in
  // Redis then failed (Lua passes the window's milliseconds as 1e+17, "not an integer"), so limits
  // fell back to each process; MINER_BREAKER_COOLDOWN_MS past 8.64e15 opened breakers until an
  // Invalid Date.
  it('refuses a rate-limit window over a year and a breaker cool-down over a day', () => {
    expect(
      problemsOf({
        RATE_LIMIT_WINDOW_SECONDS: '31536001',
        AUTH_FAILURE_WINDOW_SECONDS: '100000000000',
        MINER_BREAKER_COOLDOWN_MS: '86400001',
      }).sort(),
    ).toEqual([
      'AUTH_FAILURE_WINDOW_SECONDS: must be at most 31536000 s (365 days)',
      'MINER_BREAKER_COOLDOWN_MS: must be at most 86400000 ms (a day)',
      'RATE_LIMIT_WINDOW_SECONDS: must be at most 31536000 s (365 days)',
    ]);
    expect(
      loadConfig({
        RATE_LIMIT_WINDOW_SECONDS: '31536000',
        AUTH_FAILURE_WINDOW_SECONDS: '31536000',
        MINER_BREAKER_COOLDOWN_MS: '86400000',
      }),
    ).toMatchObject({
      rateLimits: { windowSeconds: 31_536_000 },
      auth: { failureWindowSeconds: 31_536_000 },
      network: { breakerCooldownMs: 86_400_000 },
    });
  });

  // Node fires a timer longer than 2^31 − 1 ms after 1 ms: INDEX_SYNC_INTERVAL=3000000 ran the
  // job hundreds of times a second, INDEX_FETCH_TIMEOUT_MS=3000000000 timed every call out.
  it('refuses a duration longer than the longest timer Node keeps, naming the variable', () => {
    const inMs = [
      'PUBLICATION_INTERVAL_MS',
      'SUBTENSOR_TIMEOUT_MS',
      'INDEX_FETCH_TIMEOUT_MS',
      'BUCKET_FETCH_TIMEOUT_MS',
      'DATABASE_CONNECT_TIMEOUT_MS',
      'HTTP_KEEP_ALIVE_TIMEOUT_MS',
      'DOWNLOAD_STALL_TIMEOUT_MS',
    ];
    const inSeconds = [
      'METAGRAPH_SYNC_INTERVAL',
      'INDEX_SYNC_INTERVAL',
      'TASK_LIFECYCLE_TICK',
      'QUERY_CACHE_TTL_SECONDS',
    ];
    expect(
      problemsOf({
        ...Object.fromEntries(inMs.map((name) => [name, '2147483648'])),
        ...Object.fromEntries(inSeconds.map((name) => [name, '2147484'])),
      }).sort(),
    ).toEqual(
      [
        ...inMs.map(
          (name) =>
            `${name}: must be at most 2147483647 ms (about 24.8 days), the longest timer Node keeps`,
        ),
        ...inSeconds.map(
          (name) =>
            `${name}: must be at most 2147483 s (about 24.8 days), the longest timer Node keeps`,
        ),
      ].sort(),
    );
    const longest = loadConfig({
      SUBTENSOR_URL: 'ws://127.0.0.1:9944',
      ...Object.fromEntries(inMs.map((name) => [name, '2147483647'])),
      ...Object.fromEntries(inSeconds.map((name) => [name, '2147483'])),
    });
    expect(longest.network.indexSync).toMatchObject({
      intervalMs: 2_147_483_000,
      fetchTimeoutMs: 2_147_483_647,
    });
    expect(longest.network.subtensor?.syncIntervalMs).toBe(2_147_483_000);
    expect(longest.tasks.tickMs).toBe(2_147_483_000);
  });

  it('refuses a DATABASE_STATEMENT_TIMEOUT_MS Postgres would refuse at the first connection', () => {
    expect(problemsOf({ DATABASE_STATEMENT_TIMEOUT_MS: '2147483648' })).toEqual([
      "DATABASE_STATEMENT_TIMEOUT_MS: must be at most 2147483647 ms, the most Postgres's statement_timeout takes",
    ]);
    expect(
      loadConfig({ DATABASE_STATEMENT_TIMEOUT_MS: '2147483647' }).database.statementTimeoutMs,
    ).toBe(2_147_483_647);
  });

  // Each running job holds a connection for its lock: with a pool no larger than the jobs
  // running at once, their statements and every request waited for one until they timed out.
  it('refuses a DATABASE_POOL_SIZE the background jobs would fill, saying why', () => {
    expect(MIN_DATABASE_POOL_SIZE).toBe(5);
    expect(problemsOf({ DATABASE_POOL_SIZE: '4' })).toEqual([
      'DATABASE_POOL_SIZE: must be at least 5: each of the 3 background jobs holds a connection ' +
        'while it runs, and their statements and requests need two more',
    ]);
    expect(problemsOf({ DATABASE_POOL_SIZE: '1' })).toHaveLength(1);
    expect(loadConfig({ DATABASE_POOL_SIZE: '5' }).database.poolSize).toBe(5);
  });

  it('counts every periodic job of the source in the smallest DATABASE_POOL_SIZE', () => {
    const source = join(__dirname, '..');
    const jobs = readdirSync(source, { recursive: true, encoding: 'utf8' })
      .filter((file) => file.endsWith('.ts') && !file.endsWith('.spec.ts'))
      .map((file) => readFileSync(join(source, file), 'utf8').split('new PeriodicJob(').length - 1)
      .reduce((sum, count) => sum + count, 0);
    expect(jobs).toBe(PERIODIC_JOBS);
  });

  // The index sync is raised to what the GetMinerIndex budget allows: a budget of one call in
  // 600 hours raised it beyond the longest timer as surely as INDEX_SYNC_INTERVAL could.
  it('refuses a GetMinerIndex budget that would sync the index less often than a timer can wait', () => {
    expect(problemsOf({ MINER_CALL_BUDGETS: 'GetMinerIndex=1/600h' })).toEqual([
      'MINER_CALL_BUDGETS: GetMinerIndex=1/600h (its window counted 300 s longer, MINER_CALL_BUDGET_MARGIN_SECONDS) ' +
        'would sync the index every 2160300 s, beyond the longest timer Node keeps (2147483 s, about 24.8 days); ' +
        'give it more calls or a shorter window',
    ]);
    expect(
      loadConfig({ MINER_CALL_BUDGETS: 'GetMinerIndex=1/596h', INDEX_SYNC_INTERVAL: '2145600' })
        .network.indexSync.intervalMs,
    ).toBe(2_145_900_000);
  });

  it('looks at idle memory every 15 s by default, on IDLE_MEMORY_CHECK_SECONDS, or never on 0', () => {
    expect(loadConfig({}).idleMemoryCheckMs).toBe(15_000);
    expect(loadConfig({ IDLE_MEMORY_CHECK_SECONDS: '60' }).idleMemoryCheckMs).toBe(60_000);
    expect(loadConfig({ IDLE_MEMORY_CHECK_SECONDS: '0' }).idleMemoryCheckMs).toBe(0);
    expect(() => loadConfig({ IDLE_MEMORY_CHECK_SECONDS: '3601' })).toThrow(
      /IDLE_MEMORY_CHECK_SECONDS/,
    );
    expect(() => loadConfig({ IDLE_MEMORY_CHECK_SECONDS: '1.5' })).toThrow(
      /IDLE_MEMORY_CHECK_SECONDS/,
    );
  });

  describe('miner network settings', () => {
    it('allows only public unicast addresses in production by default', () => {
      expect(loadConfig(PRODUCTION).network.allowedNetworks).toEqual({
        publicUnicast: true,
        cidrs: [],
      });
    });

    it.each(['development', 'test'])('allows only loopback by default in %s', (nodeEnv) => {
      expect(loadConfig({ NODE_ENV: nodeEnv }).network.allowedNetworks).toEqual(LOOPBACK);
    });

    it('takes MINER_ALLOWED_NETWORKS over the default of the environment', () => {
      const config = loadConfig({ ...PRODUCTION, MINER_ALLOWED_NETWORKS: '10.0.0.0/8, loopback' });

      expect(config.network.allowedNetworks).toEqual({
        publicUnicast: false,
        cidrs: ['10.0.0.0/8', '127.0.0.0/8', '::1/128'],
      });
    });

    it('leaves a validator on the same hotkey its calls by default: 1 index, 1 bucket, 8 bulk, 8 on-demand an hour', () => {
      const { network } = loadConfig(PRODUCTION);
      expect(network.validatorSharesHotkey).toBe(true);
      expect(network.callBudgets).toEqual({
        GetMinerIndex: { calls: 1, windowMs: HOUR_MS },
        GetDataEntityBucket: { calls: 1, windowMs: HOUR_MS },
        GetContentsByBuckets: { calls: 8, windowMs: HOUR_MS },
        OnDemandRequest: { calls: 8, windowMs: HOUR_MS },
      });
    });

    // No validator calls the miners of the devnet `npm start` runs: beside one that is not
    // there, the first index sync's spot checks left query_bucket no call for an hour.
    it.each([
      ["unset in front of npm start's devnet", false, {}],
      [
        'unset in front of a devnet asked for by name',
        false,
        { NODE_ENV: 'test', DEVNET_MINERS: '4' },
      ],
      ['unset with SUBTENSOR_URL', true, { SUBTENSOR_URL: 'ws://127.0.0.1:9944' }],
      ['unset with METAGRAPH_FILE', true, { METAGRAPH_FILE: '/tmp/metagraph.json' }],
      ['unset in tests', true, { NODE_ENV: 'test' }],
      ['unset in production', true, PRODUCTION],
      ['set to true in front of the devnet', true, { VALIDATOR_SHARES_HOTKEY: 'true' }],
      ['set to false', false, { ...PRODUCTION, VALIDATOR_SHARES_HOTKEY: 'false' }],
    ])('VALIDATOR_SHARES_HOTKEY %s is %s', (_, shares, env) => {
      const { network } = loadConfig(env);
      expect(network.validatorSharesHotkey).toBe(shares);
      expect(network.callBudgets.GetDataEntityBucket?.calls).toBe(shares ? 1 : 2);
    });

    it("takes the miners' whole limits with VALIDATOR_SHARES_HOTKEY=false", () => {
      const { network } = loadConfig({ VALIDATOR_SHARES_HOTKEY: 'false' });
      expect(network.validatorSharesHotkey).toBe(false);
      expect(network.callBudgets).toEqual({
        GetMinerIndex: { calls: 2, windowMs: HOUR_MS },
        GetDataEntityBucket: { calls: 2, windowMs: HOUR_MS },
        GetContentsByBuckets: { calls: 10, windowMs: HOUR_MS },
        OnDemandRequest: { calls: 10, windowMs: HOUR_MS },
      });
    });

    it('reads MINER_CALL_BUDGETS over the defaults, synapse by synapse', () => {
      const config = loadConfig({
        VALIDATOR_SHARES_HOTKEY: 'false',
        MINER_CALL_BUDGETS: 'GetMinerIndex=1/h,OnDemandRequest=30/10m,GetContentsByBuckets=none',
      });

      expect(config.network.callBudgets).toEqual({
        GetMinerIndex: { calls: 1, windowMs: HOUR_MS },
        GetDataEntityBucket: { calls: 2, windowMs: HOUR_MS },
        OnDemandRequest: { calls: 30, windowMs: 600_000 },
      });
    });

    it("counts a permit holder as a validator from subnet 13's 10,000 TAO, or VALIDATOR_MIN_STAKE", () => {
      expect(loadConfig({}).network.validatorMinStake).toBe(10_000);
      expect(loadConfig({ VALIDATOR_MIN_STAKE: '4096.5' }).network.validatorMinStake).toBe(4096.5);
      expect(problemsOf({ VALIDATOR_MIN_STAKE: 'lots' })).toContain(
        'VALIDATOR_MIN_STAKE: must be a number (stake weight, α)',
      );
      expect(problemsOf({ VALIDATOR_MIN_STAKE: '-1' })).toEqual([
        'VALIDATOR_MIN_STAKE: must not be less than 0',
      ]);
    });

    it('refuses VALIDATOR_SHARES_HOTKEY other than true or false', () => {
      expect(problemsOf({ VALIDATOR_SHARES_HOTKEY: 'yes' })).toEqual([
        'VALIDATOR_SHARES_HOTKEY: must be one of the following values: true, false',
      ]);
    });

    it('counts every budget window five minutes longer by default, or MINER_CALL_BUDGET_MARGIN_SECONDS', () => {
      expect(loadConfig({}).network.callBudgetMarginMs).toBe(300_000);
      expect(loadConfig({ MINER_CALL_BUDGET_MARGIN_SECONDS: '0' }).network.callBudgetMarginMs).toBe(
        0,
      );
      expect(problemsOf({ MINER_CALL_BUDGET_MARGIN_SECONDS: '-1' })).toEqual([
        'MINER_CALL_BUDGET_MARGIN_SECONDS: must not be less than 0',
      ]);
    });

    it('refuses an index sync more frequent than the GetMinerIndex budget allows, saying the shortest', () => {
      expect(problemsOf({ NODE_ENV: 'test', INDEX_SYNC_INTERVAL: '3599' })).toEqual([
        'INDEX_SYNC_INTERVAL: 3599 s syncs more often than the GetMinerIndex budget of 1/h per miner allows ' +
          '(its window counted 300 s longer, MINER_CALL_BUDGET_MARGIN_SECONDS); ' +
          'set it to at least 3900, or raise the budget (the budget comes from MINER_CALL_BUDGETS over VALIDATOR_SHARES_HOTKEY=true)',
      ]);
      // The value taken, not only one set: unset in front of `npm start`'s devnet it is false.
      expect(problemsOf({ INDEX_SYNC_INTERVAL: '1799' })).toEqual([
        expect.stringContaining(
          'set it to at least 1950, or raise the budget (the budget comes from MINER_CALL_BUDGETS over VALIDATOR_SHARES_HOTKEY=false)',
        ),
      ]);
      expect(
        loadConfig({ INDEX_SYNC_INTERVAL: '1950', VALIDATOR_SHARES_HOTKEY: 'false' }).network
          .indexSync.intervalMs,
      ).toBe(1_950_000);
      expect(
        problemsOf({ INDEX_SYNC_INTERVAL: '3600', MINER_CALL_BUDGET_MARGIN_SECONDS: '0' }),
      ).toEqual([]);
      // 3600 was the default before the margin, and many a .env says it: raised, not refused.
      expect(
        loadConfig({ NODE_ENV: 'test', INDEX_SYNC_INTERVAL: '3600' }).network.indexSync.intervalMs,
      ).toBe(3_900_000);
      expect(loadConfig({ INDEX_SYNC_INTERVAL: '7200' }).network.indexSync.intervalMs).toBe(
        7_200_000,
      );
      expect(
        problemsOf({ INDEX_SYNC_INTERVAL: '130', MINER_CALL_BUDGETS: 'GetMinerIndex=30/h' }),
      ).toEqual([]);
      expect(
        problemsOf({ INDEX_SYNC_INTERVAL: '10', MINER_CALL_BUDGETS: 'GetMinerIndex=none' }),
      ).toEqual([]);
      // Without an index budget, the schema's floor is the only one.
      expect(
        problemsOf({ INDEX_SYNC_INTERVAL: '9', MINER_CALL_BUDGETS: 'GetMinerIndex=none' }),
      ).toEqual(['INDEX_SYNC_INTERVAL: must not be less than 10']);
    });

    // 3600 s / 7 calls is 514.3 s: a sync every 514 s makes 8 calls in some hour. Both bounds
    // round up, the bare one (refused below it) and the counted one (raised to it).
    it('rounds the shortest index sync up when the window does not divide by the calls', () => {
      const sevenAnHour = { MINER_CALL_BUDGETS: 'GetMinerIndex=7/h' };
      expect(problemsOf({ ...sevenAnHour, INDEX_SYNC_INTERVAL: '514' })).toEqual([
        expect.stringContaining('set it to at least 558'),
      ]);
      expect(
        loadConfig({ ...sevenAnHour, INDEX_SYNC_INTERVAL: '515' }).network.indexSync.intervalMs,
      ).toBe(558_000);
    });

    it('refuses budgets that leave the index sync or the spot checks no call at all', () => {
      expect(
        problemsOf({ MINER_CALL_BUDGETS: 'GetMinerIndex=0/h,GetDataEntityBucket=0/h' }),
      ).toEqual([
        'MINER_CALL_BUDGETS: GetMinerIndex=0/h allows no index call, so the miner index could never be synced (give it at least 1 call, or none for no budget)',
        'INDEX_SPOT_CHECKS: spot checks call GetDataEntityBucket, whose budget of 0/h allows none; set INDEX_SPOT_CHECKS=0 or give GetDataEntityBucket a budget',
      ]);
      expect(
        problemsOf({ MINER_CALL_BUDGETS: 'GetDataEntityBucket=0/h', INDEX_SPOT_CHECKS: '0' }),
      ).toEqual([]);
    });

    it("keeps half the miners' bucket calls for the spot checks, none without spot checks", () => {
      const reserve = (env: Record<string, string>) =>
        loadConfig(env).network.indexSync.spotCheckReserve;
      expect(reserve({})).toBe(0.5);
      expect(reserve({ INDEX_SPOT_CHECK_RESERVE: '0.2' })).toBe(0.2);
      expect(reserve({ INDEX_SPOT_CHECK_RESERVE: '0.2', INDEX_SPOT_CHECKS: '0' })).toBe(0);
      expect(problemsOf({ INDEX_SPOT_CHECK_RESERVE: '1.5' })).toEqual([
        expect.stringMatching(/^INDEX_SPOT_CHECK_RESERVE: /),
      ]);
    });

    it('reports bad network settings naming the variable, with every other problem at once', () => {
      const problems = problemsOf({
        DATABASE_URL: 'mysql://x',
        MINER_ALLOWED_NETWORKS: 'public, the-office',
        MINER_CALL_BUDGETS: 'GetMinerIndex=2/h,GetEverything=5/h',
      });

      expect(problems).toEqual([
        'DATABASE_URL: must be a postgres:// or postgresql:// URL: its scheme is another',
        'MINER_ALLOWED_NETWORKS: "the-office" is not a CIDR range (e.g. 203.0.113.0/24), "public" or "loopback"',
        'MINER_CALL_BUDGETS: "GetEverything" is not a synapse (GetMinerIndex, GetDataEntityBucket, GetContentsByBuckets, OnDemandRequest)',
      ]);
    });

    it('reports a malformed budget in production beside the missing secrets', () => {
      expect(problemsOf({ NODE_ENV: 'production', MINER_CALL_BUDGETS: 'GetMinerIndex' })).toEqual([
        'MASTER_KEY: required when NODE_ENV=production',
        'DATABASE_URL: required when NODE_ENV=production',
        NO_SOURCE_IN_PRODUCTION,
        'MINER_CALL_BUDGETS: "GetMinerIndex" must look like <Synapse>=<calls>/h (or /30m, /90s), or <Synapse>=none',
      ]);
    });
  });

  describe("budgets above the miners' limits", () => {
    const OVER = [
      'GetContentsByBuckets=20/h,GetMinerIndex=5/h,GetDataEntityBucket=4/h',
      'none',
      'GetMinerIndex=1/30m',
    ];

    it.each(OVER)(
      'refuses %s in production, naming MINER_CALL_BUDGETS and VALIDATOR_SHARES_HOTKEY',
      (budgets) => {
        const problems = problemsOf({
          ...PRODUCTION,
          MINER_CALL_BUDGETS: budgets,
          ...(budgets === 'none' ? { INDEX_SYNC_INTERVAL: '60' } : {}),
        });
        expect(problems.length).toBeGreaterThan(0);
        for (const problem of problems) {
          expect(problem).toMatch(/^MINER_CALL_BUDGETS: /);
          expect(problem).toContain('VALIDATOR_SHARES_HOTKEY=true');
        }
      },
    );

    it('takes the defaults and budgets within the limits in production', () => {
      expect(problemsOf(PRODUCTION)).toEqual([]);
      expect(
        problemsOf({
          ...PRODUCTION,
          MINER_CALL_BUDGETS: 'GetMinerIndex=1/2h,GetContentsByBuckets=10/h',
          INDEX_SYNC_INTERVAL: '7500',
        }),
      ).toEqual([]);
      expect(
        problemsOf({
          ...PRODUCTION,
          VALIDATOR_SHARES_HOTKEY: 'false',
          MINER_CALL_BUDGETS: 'GetMinerIndex=1/30m',
        }),
      ).toEqual([]);
    });

    // 1/58m is counted over 58 + 5 minutes: calls more than an hour and the 145 s a call may
    // arrive late apart, one in any of a miner's windows. Judged without the margin it would
    // seem to send two, and be refused.
    it('counts MINER_CALL_BUDGET_MARGIN_SECONDS when it holds a budget to the limits', () => {
      const env = { ...PRODUCTION, MINER_CALL_BUDGETS: 'GetMinerIndex=1/58m' };
      expect(problemsOf(env)).toEqual([]);
      expect(configWarnings(loadConfig({ MINER_CALL_BUDGETS: 'GetMinerIndex=1/58m' }))).toEqual([]);
      expect(problemsOf({ ...env, MINER_CALL_BUDGET_MARGIN_SECONDS: '0' })).toEqual([
        expect.stringMatching(/^MINER_CALL_BUDGETS: GetMinerIndex=1\/58m can send a miner 2/),
        expect.stringMatching(/^MINER_CALL_BUDGET_MARGIN_SECONDS: 0 s is shorter than the 145 s/),
        expect.stringMatching(/^MINER_CALL_BUDGET_MARGIN_SECONDS: 0 s is shorter than the 145 s/),
        expect.stringMatching(/^MINER_CALL_BUDGET_MARGIN_SECONDS: 0 s is shorter than the 145 s/),
      ]);
      // Counted less than an hour and the delay: a call that arrives late meets the next.
      expect(problemsOf({ ...env, MINER_CALL_BUDGETS: 'GetMinerIndex=1/57m' })).toEqual([
        expect.stringMatching(/^MINER_CALL_BUDGETS: GetMinerIndex=1\/57m can send a miner 2/),
      ]);
    });

    // A call counted at t0 arriving at t0 + 8 s (a slow connect) and the next, counted an hour
    // later, met in one of the miner's windows: the validator's evaluation was its third call.
    it('refuses a margin shorter than a call may arrive late wherever miners are real', () => {
      expect(problemsOf({ ...PRODUCTION, MINER_CALL_BUDGET_MARGIN_SECONDS: '0' })).toEqual([
        expect.stringMatching(
          /^MINER_CALL_BUDGET_MARGIN_SECONDS: 0 s is shorter than the 145 s .* GetMinerIndex=1\/h .*; set it to at least 145/,
        ),
        expect.stringMatching(/^MINER_CALL_BUDGET_MARGIN_SECONDS: .* GetDataEntityBucket=1\/h /),
        expect.stringMatching(/^MINER_CALL_BUDGET_MARGIN_SECONDS: .* GetContentsByBuckets=8\/h /),
        expect.stringMatching(/^MINER_CALL_BUDGET_MARGIN_SECONDS: .* OnDemandRequest=8\/h /),
      ]);
      expect(problemsOf({ ...PRODUCTION, MINER_CALL_BUDGET_MARGIN_SECONDS: '145' })).toEqual([]);
      expect(problemsOf(PRODUCTION)).toEqual([]);
    });

    // The miner counts a call when its event loop reaches the blacklist, which only our own
    // timeout bounds: a bucket call given 140 s may be counted 140 s after we counted it.
    it('takes the delay from the longest miner-call timeout, whichever it is', () => {
      expect(problemsOf({ ...PRODUCTION, MINER_CALL_BUDGET_MARGIN_SECONDS: '100' })).toEqual([
        "MINER_CALL_BUDGET_MARGIN_SECONDS: 100 s is shorter than the 145 s a call may arrive after it is counted (a miner counts it when it reads it, as late as the call's timeout: BUCKET_FETCH_TIMEOUT_MS=140000, the longest, and 5 s more), so GetMinerIndex=1/h can send a miner 2 calls within 60 minutes, but miners allow this hotkey 1 GetMinerIndex per 60 minutes beside the validator on the same hotkey (VALIDATOR_SHARES_HOTKEY=true: their 2 less the 1 of its evaluation); set it to at least 145 (the default is 300), or shorten BUCKET_FETCH_TIMEOUT_MS",
        expect.stringMatching(/^MINER_CALL_BUDGET_MARGIN_SECONDS: 100 s .* GetDataEntityBucket=/),
        expect.stringMatching(/^MINER_CALL_BUDGET_MARGIN_SECONDS: 100 s .* GetContentsByBuckets=/),
        expect.stringMatching(/^MINER_CALL_BUDGET_MARGIN_SECONDS: 100 s .* OnDemandRequest=/),
      ]);
      const shorter = { INDEX_FETCH_TIMEOUT_MS: '60000', BUCKET_FETCH_TIMEOUT_MS: '60000' };
      expect(
        problemsOf({ ...PRODUCTION, ...shorter, MINER_CALL_BUDGET_MARGIN_SECONDS: '100' }),
      ).toEqual([]);
      expect(
        problemsOf({ ...PRODUCTION, ...shorter, MINER_CALL_BUDGET_MARGIN_SECONDS: '64' }),
      ).toEqual([
        expect.stringMatching(
          /^MINER_CALL_BUDGET_MARGIN_SECONDS: 64 s is shorter than the 65 s .* INDEX_FETCH_TIMEOUT_MS=60000, .*; set it to at least 65 \(the default is 300\), or shorten INDEX_FETCH_TIMEOUT_MS$/,
        ),
        expect.anything(),
        expect.anything(),
        expect.anything(),
      ]);
      // A timeout longer than the default margin allows refuses the defaults.
      expect(problemsOf({ ...PRODUCTION, BUCKET_FETCH_TIMEOUT_MS: '400000' })).toEqual([
        expect.stringMatching(
          /^MINER_CALL_BUDGET_MARGIN_SECONDS: 300 s is shorter than the 405 s .* BUCKET_FETCH_TIMEOUT_MS=400000, .*; set it to at least 405 \(the default is 300\), or shorten BUCKET_FETCH_TIMEOUT_MS$/,
        ),
        expect.anything(),
        expect.anything(),
        expect.anything(),
      ]);
      // An invalid timeout is said by its own rule only.
      expect(problemsOf({ ...PRODUCTION, QUERY_DEADLINE_MS: 'soon' })).toEqual([
        expect.stringMatching(/^QUERY_DEADLINE_MS: /),
      ]);
    });

    it('starts in development, tests and in front of a loopback devnet, with a warning', () => {
      for (const env of [
        { METAGRAPH_FILE: '/tmp/metagraph.json', MINER_CALL_BUDGETS: 'GetMinerIndex=1/30m' },
        { NODE_ENV: 'test', MINER_CALL_BUDGETS: 'GetMinerIndex=1/30m' },
        {
          ...PRODUCTION,
          MINER_ALLOWED_NETWORKS: 'loopback',
          MINER_CALL_BUDGETS: 'GetMinerIndex=1/30m',
        },
      ])
        expect(configWarnings(loadConfig(env))).toEqual([
          expect.stringMatching(
            /^MINER_CALL_BUDGETS: GetMinerIndex=1\/30m can send a miner 2 calls/,
          ),
        ]);
      expect(configWarnings(loadConfig({}))).toEqual([]);
    });

    // Before, only NODE_ENV=production was held to the limits: a development process allowed
    // to dial public addresses could over-call the subnet's real miners with a warning.
    it.each(['development', 'test'])(
      'refuses them in %s too once miners beyond loopback can be reached',
      (nodeEnv) => {
        const problems = problemsOf({
          NODE_ENV: nodeEnv,
          SUBTENSOR_URL: 'ws://127.0.0.1:9944',
          MINER_ALLOWED_NETWORKS: 'public',
          MINER_CALL_BUDGETS: 'GetMinerIndex=1/30m',
        });
        expect(problems).toEqual([
          expect.stringMatching(/^MINER_CALL_BUDGETS: GetMinerIndex=1\/30m can send a miner 2/),
        ]);
      },
    );

    it('says only what is wrong with a margin that is no number', () => {
      expect(problemsOf({ ...PRODUCTION, MINER_CALL_BUDGET_MARGIN_SECONDS: 'abc' })).toEqual([
        expect.stringMatching(/^MINER_CALL_BUDGET_MARGIN_SECONDS: /),
      ]);
    });
  });

  describe('CLOCK_SIMULATION', () => {
    const SETTING = '2026-01-01T00:00:00Z@1767225600000x60';

    it.each(['development', 'test'])('runs the clock simulated in %s', (nodeEnv) => {
      expect(loadConfig({ NODE_ENV: nodeEnv, CLOCK_SIMULATION: SETTING }).clockSimulation).toEqual({
        startMs: Date.parse('2026-01-01T00:00:00Z'),
        anchorMs: 1767225600000,
        rate: 60,
      });
    });

    it('is off unless set', () => {
      expect(loadConfig({}).clockSimulation).toBeUndefined();
    });

    it('refuses it in production, beside the other problems', () => {
      expect(problemsOf({ ...PRODUCTION, CLOCK_SIMULATION: SETTING })).toEqual([
        'CLOCK_SIMULATION: for tests only (it moves the time call budgets are counted in); refused when NODE_ENV=production',
      ]);
    });

    // Budgets are counted in simulated time: at x10000 a 65-minute window passed in under a
    // second, and a development process allowed to dial public miners overspent them.
    it.each(['development', 'test'])(
      'refuses it in %s once miners beyond loopback can be reached',
      (nodeEnv) => {
        const env = { NODE_ENV: nodeEnv, CLOCK_SIMULATION: SETTING };
        for (const networks of ['public', 'loopback,10.0.0.0/8'])
          expect(problemsOf({ ...env, MINER_ALLOWED_NETWORKS: networks })).toEqual([
            `CLOCK_SIMULATION: for tests only (it moves the time call budgets are counted in); refused when MINER_ALLOWED_NETWORKS reaches beyond loopback (${networks}), where real miners would be called faster than they allow`,
          ]);
        expect(
          loadConfig({ ...env, MINER_ALLOWED_NETWORKS: '127.0.0.1,::1' }).clockSimulation,
        ).toBeDefined();
      },
    );

    it('names what is wrong with a malformed setting', () => {
      expect(problemsOf({ NODE_ENV: 'test', CLOCK_SIMULATION: 'fast' })).toEqual([
        expect.stringMatching(/^CLOCK_SIMULATION: must be <simulated start ISO 8601>@/),
      ]);
    });
  });

  describe('validator key', () => {
    it('reads the key URI and the expected hotkey', () => {
      const config = loadConfig({
        VALIDATOR_HOTKEY_URI: '//Gateway',
        VALIDATOR_HOTKEY: '5GrwvaEF5zXb26Fz9rcQpDWS57CtERHpNehXCPcNoHGKutQY',
      });

      expect(config.validatorKey).toMatchObject({
        uri: '//Gateway',
        expectedHotkey: '5GrwvaEF5zXb26Fz9rcQpDWS57CtERHpNehXCPcNoHGKutQY',
        wallet: { explicit: false },
      });
    });

    it.each(['BT_WALLET_PATH', 'BT_WALLET_NAME', 'BT_WALLET_HOTKEY'])(
      'marks the wallet explicit when %s is set',
      (variable) => {
        const config = loadConfig({ [variable]: 'validator' });

        expect(config.validatorKey.wallet).toMatchObject({ explicit: true });
      },
    );

    it('does not mark the wallet explicit when no BT_WALLET_* variable is set', () => {
      const config = loadConfig({ VALIDATOR_HOTKEY_URI: '//Gateway', BT_WALLET_NAME: '' });

      expect(config.validatorKey.wallet).toEqual({
        path: join(homedir(), '.bittensor', 'wallets'),
        name: 'default',
        hotkey: 'default',
        explicit: false,
      });
    });

    it('reads the wallet path, name and hotkey', () => {
      const config = loadConfig({
        BT_WALLET_PATH: '/srv/wallets',
        BT_WALLET_NAME: 'sn13.validator',
        BT_WALLET_HOTKEY: 'hot_key-1',
      });

      expect(config.validatorKey.wallet).toEqual({
        path: '/srv/wallets',
        name: 'sn13.validator',
        hotkey: 'hot_key-1',
        explicit: true,
      });
    });

    it.each(['..', '.', 'wallets/default', '../default', 'wallets\\default', 'a'.repeat(65)])(
      'refuses the wallet and hotkey name %p',
      (name) => {
        expect(problemsOf({ BT_WALLET_NAME: name, BT_WALLET_HOTKEY: name })).toEqual([
          'BT_WALLET_NAME: must be a file name (letters, digits, . _ -)',
          'BT_WALLET_HOTKEY: must be a file name (letters, digits, . _ -)',
        ]);
      },
    );
  });

  describe('vote publication', () => {
    it('is off without a Gravity repository, with the defaults otherwise', () => {
      expect(loadConfig({}).gravity.repoUrl).toBeUndefined();
      expect(loadConfig({}).publication).toEqual({
        intervalMs: 5000,
        retryMs: 12000,
        retryMaxMs: 3_600_000,
        leaseMs: 600_000,
      });
    });

    it('takes https, ssh and file repositories, the branch and the token', () => {
      for (const url of [
        'https://github.com/macrocosm-os/gravity',
        'ssh://git@github.com/macrocosm-os/gravity.git',
        'file:///srv/git/gravity.git',
      ])
        expect(loadConfig({ GRAVITY_REPO_URL: url }).gravity).toEqual({
          repoUrl: url,
          branch: 'main',
          token: undefined,
        });
      const config = loadConfig({
        GRAVITY_REPO_URL: 'https://github.com/macrocosm-os/gravity',
        GRAVITY_BRANCH: 'votes/validator-1',
        GRAVITY_TOKEN: 'ghp_secret_token',
      });
      expect(config.gravity).toMatchObject({
        branch: 'votes/validator-1',
        token: 'ghp_secret_token',
      });
    });

    it('refuses a credential in the URL, plain http and a bad branch, without repeating the URL', () => {
      const problems = problemsOf({
        GRAVITY_REPO_URL: 'https://user:ghp_leaked@github.com/macrocosm-os/gravity',
        GRAVITY_BRANCH: '-delete',
      });
      expect(problems).toHaveLength(2);
      expect(problems[0]).toMatch(
        /^GRAVITY_REPO_URL: must be an https:\/\/ URL without credentials/,
      );
      expect(problems[1]).toMatch(/^GRAVITY_BRANCH: /);
      expect(problems.join('\n')).not.toContain('ghp_leaked');
      expect(
        problemsOf({ GRAVITY_REPO_URL: 'http://github.com/macrocosm-os/gravity' }),
      ).toHaveLength(1);
    });

    it('refuses a token in the query or the fragment of an https URL, and a password in an ssh URL', () => {
      // Every such URL is shown as given: in git's errors, the publication status and the log.
      for (const url of [
        'https://github.com/macrocosm-os/gravity?access_token=ghp_leaked',
        'https://github.com/macrocosm-os/gravity.git#ghp_leaked',
        'ssh://git:ghp_leaked@github.com/macrocosm-os/gravity.git',
      ]) {
        const problems = problemsOf({ GRAVITY_REPO_URL: url });
        expect(problems).toEqual([
          expect.stringMatching(/^GRAVITY_REPO_URL: must be an https:\/\/ URL without credentials/),
        ]);
        expect(problems.join('\n')).not.toContain('ghp_leaked');
      }
      expect(
        loadConfig({ GRAVITY_REPO_URL: 'ssh://git@github.com:22/macrocosm-os/gravity.git' }).gravity
          .repoUrl,
      ).toBe('ssh://git@github.com:22/macrocosm-os/gravity.git');
    });
  });
});

describe(configWarnings.name, () => {
  // pg printed its own nine-line SECURITY WARNING on stderr instead (docs/decisions.md,
  // "Start-up").
  it('says in one line that a DATABASE_URL sslmode=require is verified as verify-full', () => {
    const url = 'postgres://gateway:secret@db.example.com/validator?sslmode=';
    expect(configWarnings(loadConfig({ DATABASE_URL: `${url}require` }))).toEqual([
      expect.stringMatching(/^DATABASE_URL: sslmode=require is taken as sslmode=verify-full /),
    ]);
    expect(configWarnings(loadConfig({ DATABASE_URL: `${url}verify-full` }))).toEqual([]);
  });
});
