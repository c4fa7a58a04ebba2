import { plainToInstance } from 'class-transformer';
import { ValidationError, validateSync } from 'class-validator';
import { ClockSimulation, parseClockSimulation } from '../common/clock/clock-simulation';
import { AppConfig, OnDemandMode } from './app-config';
import { parseCorsOrigins } from './cors-origins';
import { BODY_LIMIT_FORM, bytesOf } from '../common/http/body-limit';
import { EnvironmentVariables } from './environment-variables';
import { expandHome, PATH_VARIABLES } from './home-path';
import { indexSyncProblems, indexSyncSeconds } from './index-sync-schedule';
import { pgSslModeProblem, tlsModeWarning } from './database-tls';
import {
  callArrivalDelay,
  callBudgetExcesses,
  defaultCallBudgets,
  loopbackOnly,
} from './miner-call-limits';
import {
  AllowedNetworks,
  CallBudgets,
  parseAllowedNetworks,
  parseCallBudgets,
} from './miner-network-settings';
import { publicationLeaseProblem, publicationLeaseProblems } from './publication-timeouts';
import { parseTrustProxy, TrustProxy } from './trust-proxy';

export class ConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(`Invalid configuration:\n  - ${problems.join('\n  - ')}`);
    this.name = 'ConfigError';
  }
}

/**
 * Validates the environment once at boot and turns it into the typed `AppConfig`.
 * Every problem is reported at once, each naming the variable and what is wrong with it.
 */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): AppConfig {
  // Every value is read without the white space at its ends (dotenv keeps it inside quotes):
  // PORT=" 3000 " was port 3000 while BODY_LIMIT=" 1mb" was refused. Empty is unset, and so is a
  // value of spaces alone: class-transformer's Number(' ') was 0, NETUID=" " subnet 0.
  const raw = Object.fromEntries(
    Object.entries(env)
      .map(([name, value]) => [name, value?.trim()])
      .filter(([, value]) => value !== undefined && value !== ''),
  ) as Record<string, string>;
  const vars = plainToInstance(EnvironmentVariables, raw, { excludeExtraneousValues: false });
  const errors = validateSync(vars, { skipMissingProperties: false });
  const problems = errors.flatMap((error) =>
    messagesOf(error).map((message) => `${error.property}: ${message}`),
  );
  // The checks across settings compare values that passed their own rules: one out of range
  // (HTTP_REQUEST_TIMEOUT_MS=0) is reported once, by its own rule, not again by a comparison
  // that blames a neighbour or asks for a number derived from the refused one.
  const refused = new Set(errors.map((error) => error.property));
  const valid = (...names: (keyof EnvironmentVariables)[]) =>
    names.every((name) => !refused.has(name));
  if (vars.NODE_ENV === 'production') {
    if (!vars.MASTER_KEY) problems.push('MASTER_KEY: required when NODE_ENV=production');
    else if (SAMPLE_MASTER_KEYS.includes(vars.MASTER_KEY))
      problems.push(
        `MASTER_KEY: the sample value of .env.example is public, refused when NODE_ENV=production; generate one: ${MASTER_KEY_COMMAND}`,
      );
    if (!vars.DATABASE_URL) problems.push('DATABASE_URL: required when NODE_ENV=production');
  }
  expandHomePaths(problems, vars);
  const sslMode = pgSslModeProblem(vars.DATABASE_URL, env.PGSSLMODE);
  if (sslMode) problems.push(sslMode);
  problems.push(
    ...metagraphSourceProblems(vars, env),
    ...bodyLimitProblems(vars.BODY_LIMIT),
    ...(valid('HTTP_HEADERS_TIMEOUT_MS', 'HTTP_REQUEST_TIMEOUT_MS')
      ? httpTimeoutProblems(vars)
      : []),
    ...(valid('PUBLICATION_LEASE_MS', 'SUBTENSOR_TIMEOUT_MS')
      ? publicationLeaseProblems(vars)
      : []),
  );
  const allowedNetworks = parsed(problems, 'MINER_ALLOWED_NETWORKS', () =>
    parseAllowedNetworks(
      vars.MINER_ALLOWED_NETWORKS ?? (vars.NODE_ENV === 'production' ? 'public' : 'loopback'),
    ),
  );
  const trustProxy = parsed(problems, 'TRUST_PROXY', () =>
    parseTrustProxy(vars.TRUST_PROXY ?? 'false'),
  );
  const corsOrigins = parsed(problems, 'CORS_ORIGINS', () =>
    parseCorsOrigins(vars.CORS_ORIGINS ?? ''),
  );
  const validatorSharesHotkey = sharesHotkey(vars);
  const callBudgets = parsed(problems, 'MINER_CALL_BUDGETS', () =>
    parseCallBudgets(vars.MINER_CALL_BUDGETS ?? '', defaultCallBudgets(validatorSharesHotkey)),
  );
  const marginValid = valid('MINER_CALL_BUDGET_MARGIN_SECONDS');
  if (callBudgets && marginValid && valid('INDEX_SYNC_INTERVAL', 'INDEX_SPOT_CHECKS'))
    problems.push(...indexSyncProblems(vars, callBudgets, validatorSharesHotkey));
  // Wherever real miners can be reached (any network beyond loopback, in any NODE_ENV), a
  // budget above their limits is refused. In front of a devnet on loopback only (development,
  // tests, the benchmarks), configWarnings says it. A margin its own rule refuses is already a
  // problem of its own: the arithmetic with it would only add noise.
  // A timeout its own rule refuses likewise.
  const timeoutsValid = valid(
    'INDEX_FETCH_TIMEOUT_MS',
    'BUCKET_FETCH_TIMEOUT_MS',
    'QUERY_DEADLINE_MS',
  );
  if (
    callBudgets &&
    allowedNetworks &&
    !loopbackOnly(allowedNetworks) &&
    marginValid &&
    timeoutsValid
  )
    problems.push(
      ...callBudgetExcesses(
        callBudgets,
        validatorSharesHotkey,
        vars.MINER_CALL_BUDGET_MARGIN_SECONDS * 1000,
        callArrivalDelay(vars),
      ),
    );
  const clockSimulation = vars.CLOCK_SIMULATION
    ? clockSimulationOf(problems, vars.CLOCK_SIMULATION, vars, allowedNetworks)
    : undefined;
  if (problems.length > 0) throw new ConfigError(problems);

  return {
    nodeEnv: vars.NODE_ENV,
    host: vars.HOST,
    port: vars.PORT,
    databaseUrl: vars.DATABASE_URL,
    // As pg reads it (process.env, untrimmed); an empty one it reads as none.
    databaseEnvPassword: env.PGPASSWORD || undefined,
    redisUrl: vars.REDIS_URL,
    redisKeyPrefix: vars.REDIS_KEY_PREFIX,
    masterKey: vars.MASTER_KEY,
    netuid: vars.NETUID,
    validatorKey: {
      uri: vars.VALIDATOR_HOTKEY_URI,
      expectedHotkey: vars.VALIDATOR_HOTKEY,
      wallet: {
        path: vars.BT_WALLET_PATH,
        name: vars.BT_WALLET_NAME,
        hotkey: vars.BT_WALLET_HOTKEY,
        explicit: WALLET_VARIABLES.some((name) => raw[name] !== undefined),
      },
    },
    dataDir: vars.DATA_DIR,
    embeddedPostgresPort: vars.EMBEDDED_POSTGRES_PORT,
    logLevel: vars.LOG_LEVEL,
    metricsToken: vars.METRICS_TOKEN,
    bodyLimit: vars.BODY_LIMIT,
    desirability: {
      maxJobs: vars.DESIRABILITY_MAX_JOBS,
      maxActiveTasks: vars.DESIRABILITY_MAX_ACTIVE_TASKS,
      syncIntervalMs: vars.DESIRABILITY_SYNC_INTERVAL * 1000,
    },
    gravity: {
      repoUrl: vars.GRAVITY_REPO_URL,
      branch: vars.GRAVITY_BRANCH,
      token: vars.GRAVITY_TOKEN,
    },
    publication: {
      intervalMs: vars.PUBLICATION_INTERVAL_MS,
      retryMs: vars.PUBLICATION_RETRY_MS,
      retryMaxMs: Math.max(vars.PUBLICATION_RETRY_MAX_MS, vars.PUBLICATION_RETRY_MS),
      leaseMs: vars.PUBLICATION_LEASE_MS,
    },
    httpServer: {
      headersTimeoutMs: vars.HTTP_HEADERS_TIMEOUT_MS,
      requestTimeoutMs: vars.HTTP_REQUEST_TIMEOUT_MS,
      keepAliveTimeoutMs: vars.HTTP_KEEP_ALIVE_TIMEOUT_MS,
    },
    trustProxy: trustProxy as TrustProxy,
    corsOrigins: corsOrigins as string[],
    shutdownTimeoutMs: vars.SHUTDOWN_TIMEOUT_MS,
    idleMemoryCheckMs: vars.IDLE_MEMORY_CHECK_SECONDS * 1000,
    rateLimits: {
      regularPerWindow: vars.RATE_LIMIT_REGULAR,
      validatorPerWindow: vars.RATE_LIMIT_VALIDATOR,
      windowSeconds: vars.RATE_LIMIT_WINDOW_SECONDS,
    },
    auth: {
      failureLimit: vars.AUTH_FAILURE_LIMIT,
      failureWindowSeconds: vars.AUTH_FAILURE_WINDOW_SECONDS,
      keyCacheTtlMs: vars.KEY_CACHE_TTL_MS,
    },
    database: {
      poolSize: vars.DATABASE_POOL_SIZE,
      statementTimeoutMs: vars.DATABASE_STATEMENT_TIMEOUT_MS,
      connectTimeoutMs: vars.DATABASE_CONNECT_TIMEOUT_MS,
    },
    network: {
      metagraphFile: vars.METAGRAPH_FILE,
      subtensor: vars.SUBTENSOR_URL
        ? {
            url: vars.SUBTENSOR_URL,
            syncIntervalMs: vars.METAGRAPH_SYNC_INTERVAL * 1000,
            timeoutMs: vars.SUBTENSOR_TIMEOUT_MS,
          }
        : undefined,
      devnetMiners: devnetMiners(vars),
      devnetStoredOnly: vars.DEVNET_STORED_ONLY === 'true',
      minersPerQuery: vars.QUERY_MINERS,
      quorum: Math.min(vars.QUERY_QUORUM, vars.QUERY_MINERS),
      queryDeadlineMs: vars.QUERY_DEADLINE_MS,
      queryCacheTtlSeconds: vars.QUERY_CACHE_TTL_SECONDS,
      onDemandMode: vars.ON_DEMAND_MODE as OnDemandMode,
      storedCurrentHourTtlMs: vars.STORED_CURRENT_HOUR_TTL_SECONDS * 1000,
      minerMaxResponseBytes: vars.MINER_MAX_RESPONSE_BYTES,
      minerMaxIndexResponseBytes: vars.MINER_MAX_INDEX_RESPONSE_BYTES,
      minerConcurrency: vars.MINER_CONCURRENCY,
      allowedNetworks: allowedNetworks as AllowedNetworks,
      validatorSharesHotkey,
      validatorMinStake: vars.VALIDATOR_MIN_STAKE,
      callBudgets: callBudgets as CallBudgets,
      callBudgetMarginMs: vars.MINER_CALL_BUDGET_MARGIN_SECONDS * 1000,
      bucketFetchTimeoutMs: vars.BUCKET_FETCH_TIMEOUT_MS,
      breakerFailures: vars.MINER_BREAKER_FAILURES,
      breakerCooldownMs: vars.MINER_BREAKER_COOLDOWN_MS,
      credibilityAlpha: vars.CREDIBILITY_ALPHA,
      indexSync: {
        intervalMs: indexSyncSeconds(vars, callBudgets!) * 1000,
        onStart: vars.INDEX_SYNC_ON_START === 'true',
        concurrency: vars.INDEX_SYNC_CONCURRENCY,
        fetchTimeoutMs: vars.INDEX_FETCH_TIMEOUT_MS,
        spotChecks: vars.INDEX_SPOT_CHECKS,
        // Without spot checks there is nothing to keep calls for.
        spotCheckReserve: vars.INDEX_SPOT_CHECKS > 0 ? vars.INDEX_SPOT_CHECK_RESERVE : 0,
      },
    },
    repos: { hfResultsPath: vars.HF_RESULTS_PATH },
    defaultDesirabilitiesFile: vars.DEFAULT_DESIRABILITIES_FILE,
    ...(clockSimulation ? { clockSimulation } : {}),
    tasks: {
      collectIntervalMs: vars.TASK_COLLECT_INTERVAL * 1000,
      collectLimit: vars.TASK_COLLECT_LIMIT,
      collectConcurrency: vars.TASK_COLLECT_CONCURRENCY,
      collectPerMinute: vars.TASK_COLLECT_PER_MINUTE,
      budgetReserve: vars.TASK_BUDGET_RESERVE,
      tickMs: vars.TASK_LIFECYCLE_TICK * 1000,
      maxCompileAttempts: vars.TASK_MAX_COMPILE_ATTEMPTS,
      downloadStallTimeoutMs: vars.DOWNLOAD_STALL_TIMEOUT_MS,
    },
  };
}

const WALLET_VARIABLES = ['BT_WALLET_PATH', 'BT_WALLET_NAME', 'BT_WALLET_HOTKEY'];

/** A command that makes a master key (README, .env.example and the refusal say it). */
export const MASTER_KEY_COMMAND = 'openssl rand -hex 32';

/** Master keys published as examples (.env.example until it left the value empty): known to all. */
const SAMPLE_MASTER_KEYS = ['change-me-to-a-long-random-string'];

/**
 * What a loaded configuration allows but should not, said as a warning at start: budgets above
 * the miners' limits (refused wherever real miners can be reached, loadConfig), outside
 * production a publication lease shorter than an attempt (refused in production, loadConfig),
 * and a DATABASE_URL sslmode that the gateway passes on as verify-full (explicitTlsMode).
 */
export function configWarnings(config: AppConfig): string[] {
  const { network } = config;
  const { callBudgets, validatorSharesHotkey, callBudgetMarginMs, subtensor } = network;
  const delay = callArrivalDelay({
    INDEX_FETCH_TIMEOUT_MS: network.indexSync.fetchTimeoutMs,
    BUCKET_FETCH_TIMEOUT_MS: network.bucketFetchTimeoutMs,
    QUERY_DEADLINE_MS: network.queryDeadlineMs,
  });
  const lease =
    config.nodeEnv !== 'production' && config.gravity.repoUrl && subtensor
      ? publicationLeaseProblem(config.publication.leaseMs, subtensor.timeoutMs)
      : undefined;
  const tls = tlsModeWarning(config.databaseUrl);
  return [
    ...callBudgetExcesses(callBudgets, validatorSharesHotkey, callBudgetMarginMs, delay),
    ...(lease ? [lease] : []),
    ...(tls ? [tls] : []),
  ];
}

/**
 * What the rules of variable `name` say of `value`, as loadConfig would (without the name): for
 * a value that stands in for an unset variable, held to its rules (the development master-key
 * file for MASTER_KEY). Empty when the value passes.
 */
export function variableProblems(name: keyof EnvironmentVariables, value: string): string[] {
  const vars = plainToInstance(EnvironmentVariables, { [name]: value });
  return validateSync(vars, { skipMissingProperties: false })
    .filter((error) => error.property === name)
    .flatMap(messagesOf);
}

/** A refused variable's messages, plainly worded and the type check alone when it failed. */
function messagesOf(error: ValidationError): string[] {
  return typeFirst(error.constraints ?? {}).map((message) => plainMessage(error.property, message));
}

/**
 * A variable's failed constraints, the type's alone when it is not even of its type: `abc` is
 * not an integer, and "must not be less than 1" beside that would mislead.
 */
function typeFirst(constraints: Record<string, string>): string[] {
  const typeChecks = ['isInt', 'isNumber'].filter((name) => name in constraints);
  return (typeChecks.length > 0 ? typeChecks : Object.keys(constraints)).map(
    (name) => constraints[name],
  );
}

/**
 * class-validator's own messages begin with the variable's name, which the problem already
 * leads with ("PORT: PORT must not be less than 1" read as a stutter), and its number message
 * speaks of constraints the operator cannot see: a value that is not a number is refused as such.
 */
function plainMessage(property: string, message: string): string {
  const own = message.startsWith(`${property} `) ? message.slice(property.length + 1) : message;
  return own === 'must be a number conforming to the specified constraints'
    ? 'must be a number'
    : own;
}

/** Under this, ordinary requests are refused: a vote of one job is about 200 bytes. */
const LEAST_BODY_LIMIT_BYTES = 1024;

/** `0b` passed, and every request with a body was a 413 (an operator audit). */
function bodyLimitProblems(limit: string): string[] {
  // A limit of another form is refused by its own rule.
  if (!BODY_LIMIT_FORM.test(limit) || bytesOf(limit) >= LEAST_BODY_LIMIT_BYTES) return [];
  return ['BODY_LIMIT: must be at least 1kb (a smaller limit refuses ordinary requests with 413)'];
}

/**
 * Node's server refuses a headers timeout longer than the request timeout when given both at
 * construction; set as properties (common/http/client-errors.ts), they were taken, and the
 * request's limit cut a slow client first: the headers' never applied. (HTTP_REQUEST_TIMEOUT_MS
 * is at least 1000: 0, Node's "off", is not taken.) A value that is no number is refused by its
 * own rule.
 */
function httpTimeoutProblems(vars: EnvironmentVariables): string[] {
  const { HTTP_HEADERS_TIMEOUT_MS: headers, HTTP_REQUEST_TIMEOUT_MS: request } = vars;
  if (!(headers > request)) return [];
  return [
    `HTTP_HEADERS_TIMEOUT_MS: ${headers} is longer than HTTP_REQUEST_TIMEOUT_MS (${request}), ` +
      'which bounds the headers too, so it would never apply; set it at most HTTP_REQUEST_TIMEOUT_MS',
  ];
}

/**
 * One metagraph source at most; in production one is required, so that no deployment serves
 * made-up data. The simulated devnet is a development tool outside the production build: a
 * production gateway in front of it reads the metagraph file the devnet writes.
 *
 * An empty SUBTENSOR_URL is unset here, but docker-compose takes the public entrypoint only when
 * .env does not name the variable at all, and the sample .env of releases before 2026-11-30
 * held `SUBTENSOR_URL=` uncommented: after an upgrade such a deployment stopped starting, told
 * only that a source is required. The refusal says so.
 */
function metagraphSourceProblems(vars: EnvironmentVariables, env: NodeJS.ProcessEnv): string[] {
  if (vars.SUBTENSOR_URL && vars.METAGRAPH_FILE)
    return ['SUBTENSOR_URL, METAGRAPH_FILE: set one metagraph source, not both'];
  if (vars.NODE_ENV !== 'production') return [];
  if (vars.DEVNET_MINERS)
    return [
      'DEVNET_MINERS: production never starts the simulated devnet; run it on its own ' +
        '(`npm run devnet -- --metagraph <file>`) and set METAGRAPH_FILE to its metagraph',
    ];
  if (!vars.SUBTENSOR_URL && !vars.METAGRAPH_FILE)
    return [
      'SUBTENSOR_URL, METAGRAPH_FILE: one is required when NODE_ENV=production ' +
        '(SUBTENSOR_URL=wss://entrypoint-finney.opentensor.ai:443 reads subnet NETUID from the chain)' +
        (env.SUBTENSOR_URL?.trim() === ''
          ? '; SUBTENSOR_URL is set but empty, which sets no source: remove the line from .env ' +
            '(docker-compose then takes the public entrypoint) or name a node'
          : ''),
    ];
  return [];
}

/**
 * CLOCK_SIMULATION moves the process's time, and with it every call budget, cooldown and
 * freshness the gateway keeps: a test tool that production refuses to start with, and so does
 * any mode that may call miners beyond loopback (budgets counted in simulated time would let
 * real miners be called as fast as the clock runs; only a devnet on this machine keeps its
 * time). `allowedNetworks` undefined: refused by its own rule already.
 */
function clockSimulationOf(
  problems: string[],
  text: string,
  vars: EnvironmentVariables,
  allowedNetworks: AllowedNetworks | undefined,
): ClockSimulation | undefined {
  const refused =
    vars.NODE_ENV === 'production'
      ? 'NODE_ENV=production'
      : allowedNetworks && !loopbackOnly(allowedNetworks)
        ? `MINER_ALLOWED_NETWORKS reaches beyond loopback (${vars.MINER_ALLOWED_NETWORKS}), ` +
          'where real miners would be called faster than they allow'
        : undefined;
  if (refused) {
    problems.push(
      `CLOCK_SIMULATION: for tests only (it moves the time call budgets are counted in); refused when ${refused}`,
    );
    return undefined;
  }
  return parsed(problems, 'CLOCK_SIMULATION', () => parseClockSimulation(text));
}

/**
 * Simulated miners for the development entry point (`npm start`) to start: only without a
 * metagraph source, by default only in development, never in production.
 */
function devnetMiners(vars: EnvironmentVariables): number {
  if (vars.SUBTENSOR_URL || vars.METAGRAPH_FILE) return 0;
  return vars.DEVNET_MINERS ?? (vars.NODE_ENV === 'development' ? 8 : 0);
}

/**
 * VALIDATOR_SHARES_HOTKEY as set; unset, `true` (the subnet's validator signs with this hotkey),
 * except in front of the devnet `npm start` runs, where no validator calls the miners. Leaving
 * that absent validator its calls gave the gateway one bucket call a miner an hour: the first
 * index sync's spot checks took 5 of the 8, the spot checks' share kept the rest, and every
 * `query_bucket` after `npm start` answered `status: "error"` until the hour was over.
 */
function sharesHotkey(vars: EnvironmentVariables): boolean {
  if (vars.VALIDATOR_SHARES_HOTKEY !== undefined) return vars.VALIDATOR_SHARES_HOTKEY === 'true';
  return devnetMiners(vars) === 0;
}

/**
 * Every path setting with its `~` expanded, so that each reader of the config sees the same path.
 */
function expandHomePaths(problems: string[], vars: EnvironmentVariables): void {
  for (const name of PATH_VARIABLES) {
    const path = vars[name];
    if (typeof path === 'string')
      vars[name] = parsed(problems, name, () => expandHome(path)) ?? path;
  }
}

/** Runs a parser of one variable; its error becomes a problem naming the variable. */
function parsed<T>(problems: string[], name: string, parse: () => T): T | undefined {
  try {
    return parse();
  } catch (error) {
    problems.push(`${name}: ${(error as Error).message}`);
    return undefined;
  }
}
