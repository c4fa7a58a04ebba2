import type { DestinationStream } from 'pino';
import type { ClockSimulation } from '../common/clock/clock-simulation';
import type { RateLimitSettings } from '../common/throttling/rate-limit-settings';
import { AllowedNetworks, CallBudgets } from './miner-network-settings';
import type { TrustProxy } from './trust-proxy';

/**
 * The typed configuration the rest of the code reads; `load-config.ts` reads it from
 * `process.env`. The only other readers hand the environment on whole: to git (gravity/git.ts),
 * and at the command line's entry points (migrate-command.ts, the devnet's cli.ts).
 */
export interface AppConfig {
  nodeEnv: 'development' | 'production' | 'test';
  host: string;
  port: number;
  /** Absent in development: the service then starts an embedded Postgres under `dataDir`. */
  databaseUrl: string | undefined;
  /**
   * PGPASSWORD, which node-postgres reads from the environment itself (as it does PGUSER,
   * PGHOST…) when DATABASE_URL has no password: known only to the log scanner (logScannerFor).
   */
  databaseEnvPassword: string | undefined;
  redisUrl: string | undefined;
  /** Prepended to every key this service writes to Redis. */
  redisKeyPrefix: string;
  /** Absent only in development before the key file is created (see master-key.ts). */
  masterKey: string | undefined;
  netuid: number;
  /** Where the validator's signing key comes from (network/bittensor/validator-key.ts). */
  validatorKey: ValidatorKeySettings;
  dataDir: string;
  embeddedPostgresPort: number;
  logLevel: string;
  /** Bearer token that may read GET /metrics (the master key always may). */
  metricsToken: string | undefined;
  /** Where log lines go instead of stdout (tests capture them); never set from the environment. */
  logDestination?: DestinationStream;
  bodyLimit: string;
  httpServer: HttpServerConfig;
  desirability: DesirabilityConfig;
  gravity: GravityConfig;
  publication: PublicationConfig;
  corsOrigins: string[];
  /**
   * The proxies whose X-Forwarded-For is believed (Express's `trust proxy`, set by app.setup.ts):
   * `req.ip`, which failed logins are counted by, is the client behind them. `false`: the peer.
   */
  trustProxy: TrustProxy;
  /** Bound on draining in-flight requests at SIGTERM before connections are cut. */
  shutdownTimeoutMs: number;
  /** How often an idle process gives memory back (IdleMemoryTrim); 0 when turned off. */
  idleMemoryCheckMs: number;
  rateLimits: RateLimitSettings;
  auth: AuthConfig;
  database: DatabaseTuning;
  network: NetworkConfig;
  repos: ReposConfig;
  tasks: TasksConfig;
  /** The network owner's default desirability list (JSON), weighted 30 % in the aggregate. */
  defaultDesirabilitiesFile: string;
  /** CLOCK_SIMULATION (tests only, never in production): the Clock's simulated time. */
  clockSimulation?: ClockSimulation;
}

export interface ValidatorKeySettings {
  /** VALIDATOR_HOTKEY_URI: a secret; never logged. */
  uri: string | undefined;
  /** VALIDATOR_HOTKEY: the address the key must derive to, when set. */
  expectedHotkey: string | undefined;
  wallet: {
    path: string;
    name: string;
    hotkey: string;
    /** True when any BT_WALLET_* variable was set (a missing file is then an error). */
    explicit: boolean;
  };
}

export interface ReposConfig {
  /** Validation data file of miner repositories (.parquet, .csv, .jsonl); unset = empty list. */
  hfResultsPath: string | undefined;
}

export interface NetworkConfig {
  /** JSON metagraph file (docs/miner-protocol.md). */
  metagraphFile: string | undefined;
  /** The subtensor node the metagraph is read from (exclusive with metagraphFile). */
  subtensor: SubtensorConfig | undefined;
  /** Simulated miners to start (only when neither source is set; 0 = none). */
  devnetMiners: number;
  /** The simulated miners answer 404 to OnDemandRequest (public subnet 13 since December 2025). */
  devnetStoredOnly: boolean;
  minersPerQuery: number;
  quorum: number;
  queryDeadlineMs: number;
  queryCacheTtlSeconds: number;
  /** How on-demand queries are answered (docs/decisions.md, "On-demand from stored data"). */
  onDemandMode: OnDemandMode;
  /** How long a fetch of the current hour answers stored-data queries without a new fetch. */
  storedCurrentHourTtlMs: number;
  /** Largest answer read from a miner, but for GetMinerIndex, which has its own. */
  minerMaxResponseBytes: number;
  minerMaxIndexResponseBytes: number;
  minerConcurrency: number;
  /** Where miners may be called (checked on the address actually connected to). */
  allowedNetworks: AllowedNetworks;
  /** The subnet's validator signs with this hotkey too (the default budgets leave it its calls). */
  validatorSharesHotkey: boolean;
  /**
   * Stake weight (α, not TAO) a permit holder needs to be a validator
   * (common/validator-standing.ts).
   */
  validatorMinStake: number;
  /** Calls per miner hotkey and synapse per window, shared by all replicas. */
  callBudgets: CallBudgets;
  /** How much longer than written every budget's window is counted (calls arrive late). */
  callBudgetMarginMs: number;
  /** Timeout of one GetDataEntityBucket call (spot checks, query_bucket). */
  bucketFetchTimeoutMs: number;
  /** Consecutive failures that open a miner's circuit, and how long it stays open. */
  breakerFailures: number;
  breakerCooldownMs: number;
  /** Weight of the newest observation in the credibility moving average. */
  credibilityAlpha: number;
  indexSync: IndexSyncConfig;
}

/**
 * `live`: the OnDemandRequest fan-out; `stored`: miners' stored data (GetContentsByBuckets);
 * `auto`: live while some available miner serves OnDemandRequest, else stored.
 */
export type OnDemandMode = 'live' | 'stored' | 'auto';

export interface DesirabilityConfig {
  /** Jobs per submission (legacy labels count as jobs). */
  maxJobs: number;
  /** Active tasks per validator hotkey. */
  maxActiveTasks: number;
  /** How often the network's aggregate is read again (chain commitments and Gravity files). */
  syncIntervalMs: number;
}

/** The subnet's Gravity repository: `validator_preferences/<hotkey>.json` at committed SHAs. */
export interface GravityConfig {
  /**
   * file://, https:// or ssh://, never with a credential; absent: votes are not read from (nor
   * published to) the network.
   */
  repoUrl: string | undefined;
  branch: string;
  /** GRAVITY_TOKEN, for https:// only: a secret, never logged. */
  token: string | undefined;
}

/** Publishing our vote to the Gravity repository (config.gravity) and the chain. */
export interface PublicationConfig {
  intervalMs: number;
  retryMs: number;
  retryMaxMs: number;
  leaseMs: number;
}

export interface HttpServerConfig {
  headersTimeoutMs: number;
  requestTimeoutMs: number;
  keepAliveTimeoutMs: number;
}

export interface SubtensorConfig {
  /** ws:// or wss:// */
  url: string;
  syncIntervalMs: number;
  /** Bound on one call to the node, connecting included. */
  timeoutMs: number;
}

export interface IndexSyncConfig {
  intervalMs: number;
  /** Run a sync right after start (in the background; readiness does not wait for it). */
  onStart: boolean;
  concurrency: number;
  /** Timeout of one GetMinerIndex call. */
  fetchTimeoutMs: number;
  /** Miners whose freshly synced index is spot-checked with GetDataEntityBucket per sync. */
  spotChecks: number;
  /**
   * Share (0..1) of the miners whose last GetDataEntityBucket call query_bucket leaves to the
   * spot checks (0 when there are none).
   */
  spotCheckReserve: number;
}

export interface AuthConfig {
  /** Failed authentications allowed per client IP per `failureWindowSeconds` before 429. */
  failureLimit: number;
  failureWindowSeconds: number;
  /** How long a looked-up key is trusted before it is read again (bounds deactivation delay). */
  keyCacheTtlMs: number;
}

export interface DatabaseTuning {
  poolSize: number;
  statementTimeoutMs: number;
  connectTimeoutMs: number;
}

/** DATABASE_POOL_SIZE, DATABASE_STATEMENT_TIMEOUT_MS and DATABASE_CONNECT_TIMEOUT_MS unset. */
export const DEFAULT_DATABASE_TUNING: DatabaseTuning = {
  poolSize: 10,
  statementTimeoutMs: 15000,
  connectTimeoutMs: 5000,
};

export interface TasksConfig {
  /** How often each active task collects matching data from miners. */
  collectIntervalMs: number;
  /** Items asked for per collection round. */
  collectLimit: number;
  /** Collections in flight at once, and started per minute (across replicas). */
  collectConcurrency: number;
  collectPerMinute: number;
  /**
   * Share (0..1) of each miner's call budgets kept for users' queries: tasks take calls above it.
   */
  budgetReserve: number;
  /** How often the lifecycle job wakes up to collect and compile what is due. */
  tickMs: number;
  /** Failed compile attempts before a task is `failed`. */
  maxCompileAttempts: number;
  /** How long a dataset download may make no progress before its connection is closed. */
  downloadStallTimeoutMs: number;
}
