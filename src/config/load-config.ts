import { plainToInstance } from 'class-transformer';
import { validateSync } from 'class-validator';
import { AppConfig } from './app-config';
import { minerCallBudgets, sharesHotkey } from './call-budget-settings';
import { clockSimulationOf } from './clock-simulation-setting';
import { parseCorsOrigins } from './cors-origins';
import { pgSslModeProblem } from './database-tls';
import { EnvironmentVariables } from './environment-variables';
import { expandHomePaths } from './home-path';
import { bodyLimitProblems, httpTimeoutProblems } from './http-server-settings';
import { metagraphSourceProblems } from './metagraph-source';
import { AllowedNetworks, CallBudgets, parseAllowedNetworks } from './miner-network-settings';
import { networkConfig } from './network-config';
import { productionProblems } from './production-requirements';
import { publicationLeaseProblems } from './publication-timeouts';
import { parseTrustProxy, TrustProxy } from './trust-proxy';
import { messagesOf, parsed } from './variable-problems';

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
  problems.push(...productionProblems(vars));
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
  const callBudgets = minerCallBudgets(
    problems,
    vars,
    valid,
    allowedNetworks,
    validatorSharesHotkey,
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
    network: networkConfig(vars, {
      allowedNetworks: allowedNetworks as AllowedNetworks,
      callBudgets: callBudgets as CallBudgets,
      validatorSharesHotkey,
    }),
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
