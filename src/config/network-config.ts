import { NetworkConfig, OnDemandMode } from './app-config';
import { EnvironmentVariables } from './environment-variables';
import { indexSyncSeconds } from './index-sync-schedule';
import { devnetMiners } from './metagraph-source';
import { AllowedNetworks, CallBudgets } from './miner-network-settings';

/** The settings of the network that loadConfig parsed and checked across variables first. */
export interface CheckedNetworkSettings {
  allowedNetworks: AllowedNetworks;
  callBudgets: CallBudgets;
  validatorSharesHotkey: boolean;
}

/** The miner network's part of the typed config, from variables that passed every check. */
export function networkConfig(
  vars: EnvironmentVariables,
  { allowedNetworks, callBudgets, validatorSharesHotkey }: CheckedNetworkSettings,
): NetworkConfig {
  return {
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
    allowedNetworks,
    validatorSharesHotkey,
    validatorMinStake: vars.VALIDATOR_MIN_STAKE,
    callBudgets,
    callBudgetMarginMs: vars.MINER_CALL_BUDGET_MARGIN_SECONDS * 1000,
    bucketFetchTimeoutMs: vars.BUCKET_FETCH_TIMEOUT_MS,
    breakerFailures: vars.MINER_BREAKER_FAILURES,
    breakerCooldownMs: vars.MINER_BREAKER_COOLDOWN_MS,
    credibilityAlpha: vars.CREDIBILITY_ALPHA,
    indexSync: {
      intervalMs: indexSyncSeconds(vars, callBudgets) * 1000,
      onStart: vars.INDEX_SYNC_ON_START === 'true',
      concurrency: vars.INDEX_SYNC_CONCURRENCY,
      fetchTimeoutMs: vars.INDEX_FETCH_TIMEOUT_MS,
      spotChecks: vars.INDEX_SPOT_CHECKS,
      // Without spot checks there is nothing to keep calls for.
      spotCheckReserve: vars.INDEX_SPOT_CHECKS > 0 ? vars.INDEX_SPOT_CHECK_RESERVE : 0,
    },
  };
}
