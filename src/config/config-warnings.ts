import { AppConfig } from './app-config';
import { tlsModeWarning } from './database-tls';
import { callArrivalDelay, callBudgetExcesses } from './miner-call-limits';
import { publicationLeaseProblem } from './publication-timeouts';

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
