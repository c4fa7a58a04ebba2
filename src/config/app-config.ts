/** The typed configuration the rest of the code reads; only `load-config.ts` reads `process.env`. */
export interface AppConfig {
  nodeEnv: 'development' | 'production' | 'test';
  host: string;
  port: number;
  /** Absent in development: the service then starts an embedded Postgres under `dataDir`. */
  databaseUrl: string | undefined;
  redisUrl: string | undefined;
  /** Absent only in development before the key file is created (see master-key.ts). */
  masterKey: string | undefined;
  netuid: number;
  validatorHotkey: string;
  dataDir: string;
  embeddedPostgresPort: number;
  logLevel: string;
  bodyLimit: string;
  corsOrigins: string[];
  rateLimits: RateLimitConfig;
  auth: AuthConfig;
  database: DatabaseTuning;
}

export interface RateLimitConfig {
  regularPerWindow: number;
  validatorPerWindow: number;
  windowSeconds: number;
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
