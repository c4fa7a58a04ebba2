import type { EnvironmentVariables } from './environment-variables';

/**
 * The bounds of a vote publication's waits on the network (modules/publication, network/gravity),
 * kept below them in config so that PUBLICATION_LEASE_MS is held to them (load-config.ts).
 */

/** A git fetch of the Gravity repository. */
export const GIT_FETCH_TIMEOUT_MS = 120_000;
/** A push of one small commit; a stuck remote is given up. */
export const GIT_PUSH_TIMEOUT_MS = 120_000;
/**
 * How long a commitment may take to be included: a block is 12 s; a node queues a transaction
 * for a few blocks at most when the chain is busy.
 */
export const INCLUSION_TIMEOUT_MS = 120_000;

/**
 * The longest one publication attempt may wait on the network: a claim is taken once for the
 * push and the commitment both (docs/decisions.md, "Claims"), so its lease covers a fetch and a
 * push, a read of our commitment and of whether the chain takes one now (in parallel,
 * SUBTENSOR_TIMEOUT_MS), the inclusion (at least
 * SUBTENSOR_TIMEOUT_MS, which bounds connecting too) and, after a refusal as too soon, a read of
 * when the chain takes commitments again (SUBTENSOR_TIMEOUT_MS). Redone pushes after the branch
 * moved under ours are not counted: the remote answered those at once.
 */
export function longestPublicationAttemptMs(subtensorTimeoutMs: number): number {
  return (
    GIT_FETCH_TIMEOUT_MS +
    GIT_PUSH_TIMEOUT_MS +
    2 * subtensorTimeoutMs +
    Math.max(INCLUSION_TIMEOUT_MS, subtensorTimeoutMs)
  );
}

/**
 * What is wrong with a lease shorter than an attempt: a live replica slow on GitHub or the chain
 * lost its claim mid-attempt, another took the same vote over, and both pushed and submitted
 * set_commitment (a second extrinsic, against the chain's commitment rate limit).
 */
export function publicationLeaseProblem(
  leaseMs: number,
  subtensorTimeoutMs: number,
): string | undefined {
  // A value that is no number is refused by its own rule.
  if (!Number.isFinite(leaseMs) || !Number.isFinite(subtensorTimeoutMs)) return undefined;
  const longest = longestPublicationAttemptMs(subtensorTimeoutMs);
  if (leaseMs >= longest) return undefined;
  return (
    `PUBLICATION_LEASE_MS: ${leaseMs} is shorter than one publication attempt may take, ` +
    `${longest} ms (a git fetch of ${GIT_FETCH_TIMEOUT_MS / 1000} s, a push of ` +
    `${GIT_PUSH_TIMEOUT_MS / 1000} s, two chain reads of SUBTENSOR_TIMEOUT_MS=${subtensorTimeoutMs} ` +
    `and the commitment's inclusion, ${INCLUSION_TIMEOUT_MS / 1000} s or SUBTENSOR_TIMEOUT_MS): ` +
    "another replica would take a live one's claim over mid-attempt and publish the vote " +
    `again; set it at least ${longest}`
  );
}

/**
 * Where votes are published (a Gravity repository and a chain), a claim must outlast an attempt.
 * Refused in production, where replicas share the database; elsewhere configWarnings says it
 * (tests shorten the lease to see a dead replica's claim taken over).
 */
export function publicationLeaseProblems(
  vars: Pick<
    EnvironmentVariables,
    | 'NODE_ENV'
    | 'GRAVITY_REPO_URL'
    | 'SUBTENSOR_URL'
    | 'PUBLICATION_LEASE_MS'
    | 'SUBTENSOR_TIMEOUT_MS'
  >,
): string[] {
  if (vars.NODE_ENV !== 'production' || !vars.GRAVITY_REPO_URL || !vars.SUBTENSOR_URL) return [];
  const problem = publicationLeaseProblem(vars.PUBLICATION_LEASE_MS, vars.SUBTENSOR_TIMEOUT_MS);
  return problem ? [problem] : [];
}
