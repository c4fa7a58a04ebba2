/**
 * Why the miners asked gave a query nothing, as its answer counts them (`meta.miners_failed`):
 * part of the network's public contract (docs/decisions.md, "The network's public surface"),
 * which the API's DTOs enumerate; transport/miner-failures.ts classifies the calls' errors.
 */

/** Why a call to a miner failed; on-demand answers count them in `meta.miners_failed.reasons`. */
export const MINER_FAILURE_REASONS = [
  'timeout',
  'http_error',
  'malformed',
  'oversize',
  'wrong_schema',
  'network',
  'circuit_open',
  'busy',
  'not_served',
  'blacklisted',
  'unauthorized',
  'address_refused',
  'no_budget',
  'shutdown',
] as const;

export type MinerFailureReason = (typeof MINER_FAILURE_REASONS)[number];

/**
 * Why a queried miner gave an on-demand query nothing: its call failed, or `invalid_items`, it
 * answered with items and the checks dropped every one. Counted as a miner that answered, a
 * round in which every miner lied was answered `no_data_available` ("nothing matched") and
 * cached (a review's finding). Not a call's failure: the call itself went through.
 */
export const QUERY_FAILURE_REASONS = [...MINER_FAILURE_REASONS, 'invalid_items'] as const;

export type QueryFailureReason = (typeof QUERY_FAILURE_REASONS)[number];

/** A query's failed miners: how many, and by reason (one per miner, so they add up). */
export interface QueryFailures {
  count: number;
  reasons: Partial<Record<QueryFailureReason, number>>;
}
