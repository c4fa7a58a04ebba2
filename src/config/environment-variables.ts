import 'reflect-metadata';
import { IsIn, IsInt, IsNumber, IsOptional, IsString, Matches, Max, Min } from 'class-validator';
import { DEFAULT_VALIDATOR_MIN_STAKE } from '../common/validator-standing';
import { RATE_LIMIT_MAX, RATE_LIMIT_MIN } from '../common/throttling/rate-limit-settings';
import { BODY_LIMIT_FORM } from '../common/http/body-limit';
import { MinCharacters, MaxCharacters } from '../common/validation/text-length';
import { DEFAULT_DATABASE_TUNING } from './app-config';
import { DEFAULT_MINER_MAX_INDEX_RESPONSE_BYTES } from './miner-answer-sizes';
import { IsServiceUrl } from './service-url';
import {
  HeaderSecret,
  SafeInteger,
  DurationMs,
  DurationSeconds,
  TimerMs,
  TimerSeconds,
  toDecimal,
  toInt,
  WALLET_NAME,
} from './setting-forms';

/**
 * The longest a miner's circuit stays open (a day): longer is no circuit breaker but a ban, and
 * past 8.64e15 ms the miner's `failing` state would last until an Invalid Date.
 */
const MAX_BREAKER_COOLDOWN_MS = 24 * 3600 * 1000;

/**
 * The periodic jobs (index sync, task lifecycle, network aggregate: every `PeriodicJob`), which
 * may all run at once. Each holds a pooled connection for its advisory lock for the whole run
 * (JobRunsRepository), so a pool no larger than them left their own statements and every
 * request waiting for a connection that never came ("timeout exceeded when trying to connect",
 * 503). load-config.spec.ts counts the jobs in the source against it.
 */
export const PERIODIC_JOBS = 3;
/** The smallest DATABASE_POOL_SIZE: a connection per job's lock, and two for the rest. */
export const MIN_DATABASE_POOL_SIZE = PERIODIC_JOBS + 2;

/**
 * The most DESIRABILITY_MAX_JOBS may be: the bound the OpenAPI document gives for a vote's size.
 */
export const MAX_DESIRABILITY_JOBS = 100_000;
/** The most DESIRABILITY_SYNC_INTERVAL may be (a day): the bound the document gives for it. */
export const MAX_DESIRABILITY_SYNC_INTERVAL = 86400;

/**
 * The environment schema. `.env.example` and the README's Configuration table document every
 * variable listed here (environment-documentation.spec.ts holds them to it).
 */
export class EnvironmentVariables {
  @IsIn(['development', 'production', 'test'])
  NODE_ENV: 'development' | 'production' | 'test' = 'development';

  @IsString()
  HOST = '0.0.0.0';

  @toInt()
  @IsInt({ message: 'must be an integer port number' })
  @Min(0)
  @Max(65535)
  PORT = 3000;

  @IsOptional()
  @IsServiceUrl(['postgres:', 'postgresql:'], 'must be a postgres:// or postgresql:// URL', true)
  DATABASE_URL?: string;

  @IsOptional()
  @IsServiceUrl(['redis:', 'rediss:'], 'must be a redis:// or rediss:// URL')
  REDIS_URL?: string;

  /** Prepended to every Redis key, so that several deployments can share one Redis. */
  @Matches(/^[\w.:-]{0,64}$/, { message: 'must be up to 64 letters, digits or . : _ -' })
  REDIS_KEY_PREFIX = 'gateway:';

  @IsOptional()
  @IsString()
  @MinCharacters(16, { message: 'must be at least 16 characters (use a long random value)' })
  @HeaderSecret()
  MASTER_KEY?: string;

  /** A u16 on chain: a larger one failed every chain call, forever. */
  @toInt()
  @IsInt()
  @Min(0)
  @Max(65535, { message: 'must be at most 65535 (a subnet id is a 16-bit number on chain)' })
  NETUID = 13;

  /**
   * When set, the address the validator's key must derive to (a guard against the wrong wallet):
   * SS58 under any prefix, or the public key's `0x` hex (66 characters); decoded and compared
   * with the key in loadValidatorKey.
   */
  @IsOptional()
  @IsString()
  @MaxCharacters(66)
  VALIDATOR_HOTKEY?: string;

  /** A secret URI for the validator's key (mnemonic, 0x seed, //Alice); development and tests. */
  @IsOptional()
  @IsString()
  VALIDATOR_HOTKEY_URI?: string;

  @IsString()
  BT_WALLET_PATH = '~/.bittensor/wallets';

  @Matches(WALLET_NAME, { message: 'must be a file name (letters, digits, . _ -)' })
  BT_WALLET_NAME = 'default';

  @Matches(WALLET_NAME, { message: 'must be a file name (letters, digits, . _ -)' })
  BT_WALLET_HOTKEY = 'default';

  @IsString()
  DATA_DIR = './.data';

  @toInt()
  @IsInt()
  @Min(1)
  @Max(65535)
  EMBEDDED_POSTGRES_PORT = 54329;

  @IsIn(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'])
  LOG_LEVEL = 'info';

  /** Bearer token accepted by GET /metrics besides the master key (for Prometheus). */
  @IsOptional()
  @IsString()
  @MinCharacters(16, { message: 'must be at least 16 characters (use a long random value)' })
  @HeaderSecret()
  METRICS_TOKEN?: string;

  @Matches(BODY_LIMIT_FORM, { message: 'must look like 100kb or 1mb' })
  BODY_LIMIT = '1mb';

  @IsOptional()
  @IsString()
  CORS_ORIGINS?: string;

  /** The proxies in front (Express's `trust proxy`): req.ip is then read from X-Forwarded-For. */
  @IsOptional()
  @IsString()
  TRUST_PROXY?: string;

  /** On SIGTERM, how long in-flight requests may run before their connections are cut. */
  @toInt()
  @IsInt()
  @Min(0)
  @Max(600000)
  SHUTDOWN_TIMEOUT_MS = 10000;

  /**
   * Seconds between the process's looks at its idle memory (common/lifecycle/idle-memory.ts); 0:
   * off.
   */
  @toInt()
  @IsInt()
  @Min(0)
  @Max(3600)
  IDLE_MEMORY_CHECK_SECONDS = 15;

  @toInt()
  @IsInt()
  @Min(RATE_LIMIT_MIN)
  @Max(RATE_LIMIT_MAX)
  RATE_LIMIT_REGULAR = 100;

  @toInt()
  @IsInt()
  @Min(RATE_LIMIT_MIN)
  @Max(RATE_LIMIT_MAX)
  RATE_LIMIT_VALIDATOR = 1000;

  @toInt()
  @IsInt()
  @Min(1)
  @DurationSeconds()
  RATE_LIMIT_WINDOW_SECONDS = 3600;

  @toInt()
  @IsInt()
  @Min(1)
  @SafeInteger()
  AUTH_FAILURE_LIMIT = 20;

  @toInt()
  @IsInt()
  @Min(1)
  @DurationSeconds()
  AUTH_FAILURE_WINDOW_SECONDS = 60;

  @toInt()
  @IsInt()
  @Min(0)
  @Max(60000)
  KEY_CACHE_TTL_MS = 500;

  @toInt()
  @IsInt()
  @Min(MIN_DATABASE_POOL_SIZE, {
    message:
      `must be at least ${MIN_DATABASE_POOL_SIZE}: each of the ${PERIODIC_JOBS} background jobs ` +
      'holds a connection while it runs, and their statements and requests need two more',
  })
  @SafeInteger()
  DATABASE_POOL_SIZE = DEFAULT_DATABASE_TUNING.poolSize;

  @toInt()
  @IsInt()
  @Min(100)
  // Postgres's statement_timeout is an int of milliseconds: above it, the pool's first
  // connection failed with "invalid value for parameter" and a stack.
  @Max(2_147_483_647, {
    message: "must be at most 2147483647 ms, the most Postgres's statement_timeout takes",
  })
  DATABASE_STATEMENT_TIMEOUT_MS = DEFAULT_DATABASE_TUNING.statementTimeoutMs;

  @toInt()
  @IsInt()
  @Min(100)
  @TimerMs()
  DATABASE_CONNECT_TIMEOUT_MS = DEFAULT_DATABASE_TUNING.connectTimeoutMs;

  /** Jobs one set_desirabilities may carry (each label of a legacy entry is a job). */
  @toInt()
  @IsInt()
  @Min(1)
  @Max(MAX_DESIRABILITY_JOBS)
  DESIRABILITY_MAX_JOBS = 256;

  /** Tasks one validator hotkey may have active at once. */
  @toInt()
  @IsInt()
  @Min(1)
  @SafeInteger()
  DESIRABILITY_MAX_ACTIVE_TASKS = 1000;

  /** Time a client has to send its request headers (slow clients get a 408). */
  @toInt()
  @IsInt()
  @Min(1000)
  @SafeInteger()
  HTTP_HEADERS_TIMEOUT_MS = 20000;

  /** Time a client has to send its whole request, body included. */
  @toInt()
  @IsInt()
  @Min(1000)
  @SafeInteger()
  HTTP_REQUEST_TIMEOUT_MS = 60000;

  /**
   * How long an idle kept-alive connection stays open. Longer than a proxy keeps its idle
   * connections to us (60 s for AWS's ALB and many nginx setups): were we to close first, the
   * proxy could send a request on the connection as it closes, and answer its client 502.
   */
  @toInt()
  @IsInt()
  @Min(1000)
  @TimerMs()
  HTTP_KEEP_ALIVE_TIMEOUT_MS = 65000;

  @IsOptional()
  @IsString()
  METAGRAPH_FILE?: string;

  /** A subtensor node's websocket; the metagraph of NETUID is read from it. */
  @IsOptional()
  @IsServiceUrl(['ws:', 'wss:'], 'must be a ws:// or wss:// URL of a subtensor node')
  SUBTENSOR_URL?: string;

  /** Seconds between two reads of the metagraph from SUBTENSOR_URL. */
  @toInt()
  @IsInt()
  @Min(12)
  @TimerSeconds()
  METAGRAPH_SYNC_INTERVAL = 300;

  /** How long one call to the subtensor node (connecting included) may take. */
  @toInt()
  @IsInt()
  @Min(100)
  @TimerMs()
  SUBTENSOR_TIMEOUT_MS = 30000;

  /**
   * The subnet's Gravity repository (`validator_preferences/<hotkey>.json`): validators' votes
   * are read from it and ours is published to it. https:// (token in GRAVITY_TOKEN), ssh:// or
   * file://. Unset: votes stay local. The URL is shown as given (git's errors, the publication
   * status, the log), so nothing that could be a credential is taken: no user info, query or
   * fragment in https://, no password in ssh://.
   */
  @IsOptional()
  @Matches(/^(https:\/\/[^\s@/]+\/[^\s?#]+|ssh:\/\/([^\s:@/]+@)?[^\s@/]+\/\S+|file:\/\/\/\S+)$/, {
    message:
      'must be an https:// URL without credentials or query (the token goes in GRAVITY_TOKEN), an ssh:// URL without a password or a file:/// path',
  })
  GRAVITY_REPO_URL?: string;

  @Matches(/^(?!-)(?!.*\.\.)[\w./-]{1,100}(?<![./])$/, { message: 'must be a git branch name' })
  GRAVITY_BRANCH = 'main';

  /** A token for an https:// GRAVITY_REPO_URL (write access to publish); a secret, never logged. */
  @IsOptional()
  @IsString()
  @MinCharacters(8, { message: 'must be at least 8 characters' })
  GRAVITY_TOKEN?: string;

  /**
   * Milliseconds between two looks for a publication to make. A vote does not wake the worker:
   * votes sent within one interval are published as one (decisions.md, "No wake-up on a vote").
   */
  @toInt()
  @IsInt()
  @Min(100)
  @TimerMs()
  PUBLICATION_INTERVAL_MS = 5000;

  /** First wait after a failed attempt (one block); doubles up to PUBLICATION_RETRY_MAX_MS. */
  @toInt()
  @IsInt()
  @Min(100)
  @DurationMs()
  PUBLICATION_RETRY_MS = 12000;

  @toInt()
  @IsInt()
  @Min(100)
  @DurationMs()
  PUBLICATION_RETRY_MAX_MS = 3_600_000;

  /** How long a replica's claim on a publication holds before another may take it over. */
  @toInt()
  @IsInt()
  @Min(1000)
  @DurationMs()
  PUBLICATION_LEASE_MS = 600_000;

  /** Unset: 8 simulated miners in development when no metagraph source is set, else none. */
  @IsOptional()
  @toInt()
  @IsInt()
  @Min(0)
  @Max(64)
  DEVNET_MINERS?: number;

  /** The devnet of `npm start` answers 404 to OnDemandRequest, as today's subnet 13 miners do. */
  @IsIn(['true', 'false'])
  DEVNET_STORED_ONLY = 'false';

  /** Tests only: the process's time runs simulated (common/clock/clock-simulation.ts). */
  @IsOptional()
  @IsString()
  CLOCK_SIMULATION?: string;

  @toInt()
  @IsInt()
  @Min(1)
  @Max(64)
  QUERY_MINERS = 5;

  @toInt()
  @IsInt()
  @Min(1)
  @Max(64)
  QUERY_QUORUM = 3;

  @toInt()
  @IsInt()
  @Min(100)
  @Max(120000)
  QUERY_DEADLINE_MS = 10000;

  // The in-process cache sets a timer per answer for its lifetime (lru-cache's ttlAutopurge).
  @toInt()
  @IsInt()
  @Min(0)
  @TimerSeconds()
  QUERY_CACHE_TTL_SECONDS = 60;

  /** `live`: OnDemandRequest fan-out; `stored`: miners' stored data; `auto`: live where served. */
  @IsIn(['live', 'stored', 'auto'])
  ON_DEMAND_MODE = 'auto';

  /** How long a fetch of the current hour's bucket answers queries from the store. */
  @toInt()
  @IsInt()
  @Min(0)
  @DurationSeconds()
  STORED_CURRENT_HOUR_TTL_SECONDS = 300;

  @toInt()
  @IsInt()
  @Min(1024)
  @SafeInteger()
  MINER_MAX_RESPONSE_BYTES = 16 * 1024 * 1024;

  /** GetMinerIndex answers only: an honest index of 350,000 buckets outgrows the cap above. */
  @toInt()
  @IsInt()
  @Min(1024)
  @SafeInteger()
  MINER_MAX_INDEX_RESPONSE_BYTES = DEFAULT_MINER_MAX_INDEX_RESPONSE_BYTES;

  @toInt()
  @IsInt()
  @Min(1)
  @SafeInteger()
  MINER_CONCURRENCY = 8;

  /** CIDRs, `public` and `loopback`; default `public` in production, `loopback` otherwise. */
  @IsOptional()
  @IsString()
  MINER_ALLOWED_NETWORKS?: string;

  /**
   * The subnet's validator signs with the gateway's hotkey: the default call budgets leave it
   * the calls it spends evaluating each miner (1 GetMinerIndex and 1 GetDataEntityBucket an hour).
   * Unset: `true`, but `false` when `npm start` runs the simulated devnet (loadConfig), where no
   * validator shares the miners' limits with the gateway.
   */
  @IsOptional()
  @IsIn(['true', 'false'])
  VALIDATOR_SHARES_HOTKEY?: string;

  /**
   * Stake weight (α: alpha stake plus 0.18 × root TAO stake; not TAO) a neuron with a validator
   * permit needs to count as a validator (below it, a miner), as subnet 13's code decides: its
   * miners refuse calls from anyone else.
   */
  @toDecimal()
  @IsNumber({}, { message: 'must be a number (stake weight, α)' })
  @Min(0)
  VALIDATOR_MIN_STAKE = DEFAULT_VALIDATOR_MIN_STAKE;

  /** Per-synapse changes to the default budgets (calls per miner hotkey per window). */
  @IsOptional()
  @IsString()
  MINER_CALL_BUDGETS?: string;

  /**
   * Seconds every budget's window is counted longer than written: a miner counts a call when it
   * reads it (as late as the call's timeout), so two calls a bare window apart could land in one
   * of its windows. Too short for the budgets is refused where they are checked
   * (callBudgetExcesses: with the defaults, under the longest miner-call timeout and 5 s, 145 s).
   */
  @toInt()
  @IsInt()
  @Min(0)
  @Max(3600)
  MINER_CALL_BUDGET_MARGIN_SECONDS = 300;

  @toInt()
  @IsInt()
  @Min(1)
  @SafeInteger()
  MINER_BREAKER_FAILURES = 3;

  @toInt()
  @IsInt()
  @Min(100)
  @Max(MAX_BREAKER_COOLDOWN_MS, {
    message: `must be at most ${MAX_BREAKER_COOLDOWN_MS} ms (a day)`,
  })
  MINER_BREAKER_COOLDOWN_MS = 30000;

  @toDecimal()
  @IsNumber()
  @Min(0.01)
  @Max(1)
  CREDIBILITY_ALPHA = 0.2;

  @IsOptional()
  @IsString()
  @Matches(/\.(parquet|csv|jsonl|ndjson)$/i, {
    message: 'must name a .parquet, .csv, .jsonl or .ndjson file',
  })
  HF_RESULTS_PATH?: string;

  /** The network owner's default desirability list (JSON, either format). */
  @IsString()
  @Matches(/\.json$/i, { message: 'must name a .json file' })
  DEFAULT_DESIRABILITIES_FILE = 'config/default-desirabilities.json';

  /** Seconds between two reads of the network's desirability aggregate (chain and Gravity). */
  @toInt()
  @IsInt()
  @Min(1)
  @Max(MAX_DESIRABILITY_SYNC_INTERVAL)
  DESIRABILITY_SYNC_INTERVAL = 1200;

  /**
   * Seconds between two syncs of the miners' indexes: the GetMinerIndex budget's hour and its
   * margin (MINER_CALL_BUDGET_MARGIN_SECONDS), so that each sync finds the call free again.
   */
  @toInt()
  @IsInt()
  @Min(10)
  @TimerSeconds()
  INDEX_SYNC_INTERVAL = 3900;

  @IsIn(['true', 'false'])
  INDEX_SYNC_ON_START = 'true';

  @toInt()
  @IsInt()
  @Min(1)
  @Max(64)
  INDEX_SYNC_CONCURRENCY = 4;

  /** Timeout of one GetMinerIndex call (the subnet's validator allows 120 s). */
  @toInt()
  @IsInt()
  @Min(100)
  @TimerMs()
  INDEX_FETCH_TIMEOUT_MS = 120000;

  /** Timeout of one GetDataEntityBucket call (the subnet's validator allows 140 s). */
  @toInt()
  @IsInt()
  @Min(100)
  @TimerMs()
  BUCKET_FETCH_TIMEOUT_MS = 140000;

  @toInt()
  @IsInt()
  @Min(0)
  @SafeInteger()
  INDEX_SPOT_CHECKS = 5;

  /**
   * Share of the miners whose GetDataEntityBucket call users' query_bucket leaves to the spot
   * checks: it takes a miner's last call only while more than this share of the miners that
   * can be asked (rounded up) have one left.
   */
  @toDecimal()
  @IsNumber()
  @Min(0)
  @Max(1)
  INDEX_SPOT_CHECK_RESERVE = 0.5;

  /** Seconds between two collections of an active task. */
  @toInt()
  @IsInt()
  @Min(1)
  @DurationSeconds()
  TASK_COLLECT_INTERVAL = 3600;

  @toInt()
  @IsInt()
  @Min(1)
  @Max(1000)
  TASK_COLLECT_LIMIT = 100;

  /** Seconds between two wake-ups of the task lifecycle job. */
  @toInt()
  @IsInt()
  @Min(1)
  @TimerSeconds()
  TASK_LIFECYCLE_TICK = 60;

  /** Collections in flight at once, across replicas (one replica runs the collection pass). */
  @toInt()
  @IsInt()
  @Min(1)
  @Max(64)
  TASK_COLLECT_CONCURRENCY = 2;

  /** Collections started per minute, across replicas: the budget tasks share. */
  @toInt()
  @IsInt()
  @Min(1)
  @Max(6000)
  TASK_COLLECT_PER_MINUTE = 20;

  /**
   * Share of each miner's call budget (MINER_CALL_BUDGETS) that only users' queries take: a
   * task's collection calls a miner only while more than this share is left.
   */
  @toDecimal()
  @IsNumber()
  @Min(0)
  @Max(1)
  TASK_BUDGET_RESERVE = 0.5;

  @toInt()
  @IsInt()
  @Min(1)
  @SafeInteger()
  TASK_MAX_COMPILE_ATTEMPTS = 3;

  /**
   * How long a dataset download may go without the client reading a byte before it is closed:
   * a client that stops reading held the file and the connection open for good.
   */
  @toInt()
  @IsInt()
  @Min(1000)
  @TimerMs()
  DOWNLOAD_STALL_TIMEOUT_MS = 60000;
}
