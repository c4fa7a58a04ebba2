import { PythonFloat, pythonIsoDate, pythonJsonDumps } from '../../common/python-json';
import { AppConfig } from '../../config/app-config';
import { MAX_PREFERENCES_BYTES } from '../../network/gravity/gravity-git';

/**
 * Where a vote's publication stands: `disabled` (no Gravity repository or no chain configured, or
 * no token for https: votes stay local), `none` (no vote submitted yet), `pending` (to push),
 * `pushed` (in the Gravity repository, to commit on chain), `committed` (its SHA is on chain),
 * `failed` (the last attempt failed; retried at `next_attempt_at`, from the push or, with a SHA,
 * from the chain commitment).
 */
export const PUBLICATION_STATES = [
  'disabled',
  'none',
  'pending',
  'pushed',
  'committed',
  'failed',
] as const;
export type PublicationState = (typeof PUBLICATION_STATES)[number];

/** A row of `desirability_publications`: the newest vote of a hotkey and its publication. */
export interface PublicationRow {
  hotkey: string;
  state: Exclude<PublicationState, 'disabled' | 'none'>;
  /** Counts the hotkey's votes: a worker publishing version n learns that n + 1 replaced it. */
  version: number;
  /** The file pushed as `validator_preferences/<hotkey>.json`. */
  content: string;
  task_ids: string[];
  voted_at: Date;
  /** Consecutive failed attempts (the backoff's exponent); 0 after progress. */
  attempts: number;
  next_attempt_at: Date;
  claimed_by: string | null;
  claimed_until: Date | null;
  commit_sha: string | null;
  pushed_at: Date | null;
  block_number: string | null;
  block_hash: string | null;
  committed_at: Date | null;
  last_error: string | null;
  updated_at: Date;
  /**
   * Where the progress above was made (PublicationService's target: repository, branch and
   * netuid); null for a row written before it was recorded.
   */
  target: string | null;
}

/** A claimed publication: this worker may advance it until `claimed_until`. */
export interface Claim {
  hotkey: string;
  version: number;
  claimant: string;
}

/** A job of a vote as it is published: normalized, its dates as ISO 8601 text (or null). */
export interface PublishedJob {
  id: string;
  weight: number;
  params: {
    platform: string;
    label: string | null;
    keyword: string | null;
    post_start_datetime: string | null;
    post_end_datetime: string | null;
  };
}

/**
 * The vote's file as the subnet's uploader writes one (dynamic_desirability/data.py
 * `normalize_preferences`: `json.dumps([job.model_dump() …], indent=4)`, no newline at the end):
 * its `Job` fields in their order (`id`, `weight`, `params`), `JobParams`' in theirs (`keyword`,
 * `platform`, `label`, the dates), weights as Python floats (`1.0`), non-ASCII escaped. Dates as
 * `datetime.isoformat()` writes them (`+00:00`): the reader parses them with
 * `datetime.fromisoformat`, which before Python 3.11 refuses a `Z` and then drops the bound.
 * An empty list withdraws the vote.
 */
export function publishedFile(jobs: readonly PublishedJob[]): string {
  const date = (iso: string | null) => (iso === null ? null : pythonIsoDate(new Date(iso)));
  return pythonJsonDumps(
    jobs.map(({ id, weight, params }) => ({
      id,
      weight: new PythonFloat(weight),
      params: {
        keyword: params.keyword,
        platform: params.platform,
        label: params.label,
        post_start_datetime: date(params.post_start_datetime),
        post_end_datetime: date(params.post_end_datetime),
      },
    })),
    4,
  );
}

/** What the vote's file needs of a job: its id, and whether it names a label. */
export interface PublishableJob {
  id: string;
  params: { label: string | null };
}

/**
 * The jobs of a vote that go into its published file, and the ids of those that stay local: a
 * job without a label (keyword only). The subnet's reader of the Gravity repository cannot take
 * one: its retrieval (dynamic_desirability/desirability_retrieval.py) builds `Job(label=…)` with
 * `label: str` (rewards/data.py), and older ones call `len(label)`; either error makes every
 * validator that reads the repository fall back to the owner's default list, ignoring every vote.
 * Such jobs stay stored and registered as tasks here (docs/decisions.md, "Keyword-only jobs are
 * not published").
 */
export function publishableJobs<J extends PublishableJob>(
  jobs: readonly J[],
): { published: J[]; keptLocal: string[] } {
  return {
    published: jobs.filter((job) => job.params.label !== null),
    keptLocal: jobs.filter((job) => job.params.label === null).map((job) => job.id),
  };
}

/**
 * Why the vote's published file (its jobs with a label, publishedFile) could not count on the
 * network, or undefined when it can: over MAX_PREFERENCES_BYTES, the largest file the network's
 * readers here take (network/gravity/gravity-git.ts), so that this gateway, and every
 * other running it, would read the committed vote as no vote. A vote of DESIRABILITY_MAX_JOBS
 * (up to 100,000) jobs with long or non-ASCII ids, labels and keywords can be: the file escapes
 * each character outside ASCII as `\uXXXX` (12 bytes for an emoji, 4 in the request).
 */
export function publishedFileProblem(jobs: readonly PublishedJob[]): string | undefined {
  const bytes = publishedFile(publishableJobs(jobs).published).length;
  if (bytes <= MAX_PREFERENCES_BYTES) return undefined;
  return (
    `the vote's file for the Gravity repository would be ${bytes} bytes, more than the ` +
    `${MAX_PREFERENCES_BYTES} a vote's file may be to count on the network: submit fewer jobs, ` +
    `or shorter ids, labels and keywords`
  );
}

/**
 * Why a worker's write for its claim changed no row, from the row as it is now: a newer vote
 * replaced the claimed one (its version moved on), or the claim ran out (PUBLICATION_LEASE_MS)
 * and another replica took the same vote over. The first is the normal course of a new vote
 * (`committed`: the replaced vote reached the chain before its record); the second means an
 * attempt outlasted the lease, which an operator should see.
 */
export function lostClaim(
  claim: Claim,
  now: Pick<PublicationRow, 'version' | 'claimed_by'> | undefined,
  committed?: { sha: string; blockNumber: number },
): { replaced: boolean; message: string } {
  if (!now || Number(now.version) !== claim.version)
    return {
      replaced: true,
      message: committed
        ? `vote ${claim.version} was committed on chain in block ${committed.blockNumber} ` +
          `(${committed.sha}), then replaced by a newer vote, which is published next`
        : `vote ${claim.version} was replaced by a newer vote before it was published`,
    };
  const holder =
    now.claimed_by === null ? 'another replica' : `another replica (${now.claimed_by})`;
  return {
    replaced: false,
    message:
      `vote ${claim.version}: this replica's claim ran out (PUBLICATION_LEASE_MS) before it ` +
      `recorded its step, and ${holder} took the publication over; its record stands`,
  };
}

/**
 * Why votes cannot be published with this configuration, if they cannot: the repository or the
 * chain unset, or (`misconfigured`) an https:// repository without GRAVITY_TOKEN. Git runs with
 * no credential helper, no prompt and no credential in the URL (network/gravity/git.ts), so such
 * a repository can be read (the network's votes) but never pushed to; publishing would fail at
 * every attempt. ssh:// (the process's key) and file:/// need no token.
 */
export function publicationDisabled(
  config: Pick<AppConfig, 'gravity' | 'network'>,
): { reason: string; misconfigured: boolean } | undefined {
  const { repoUrl, token } = config.gravity;
  const missing = [
    repoUrl ? undefined : 'GRAVITY_REPO_URL',
    config.network.subtensor ? undefined : 'SUBTENSOR_URL',
  ].filter((name): name is string => name !== undefined);
  if (missing.length) return { reason: `${missing.join(' and ')} not set`, misconfigured: false };
  if (repoUrl!.startsWith('https://') && !token)
    return {
      reason:
        'GRAVITY_TOKEN not set, and an https:// GRAVITY_REPO_URL cannot be pushed to without it ' +
        '(set a token with write access, or use an ssh:// URL)',
      misconfigured: true,
    };
  return undefined;
}
