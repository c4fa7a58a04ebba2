import { isRecord } from '../../common/is-record';
import { MAX_DESIRABILITY_JOBS } from '../../config/environment-variables';
import { PreferencesAtCommit } from '../../network/gravity/gravity-repository';
import { paramsKey } from './desirability-aggregate';
import { parseDesirabilityList } from './desirability-parser';
import { JobView, toJobView } from './desirability.types';
import { DesirabilityItem } from './dto/desirability-request.dto';

/** Violations quoted in a reason; the rest are counted. */
const QUOTED_VIOLATIONS = 3;
/** Two weights closer than this are the same (a JSON round trip of a normalized weight). */
const WEIGHT_TOLERANCE = 1e-9;

/**
 * A validator's preferences file read as a vote: `submitted` is the file's list as it is,
 * `jobs` its normalized jobs (empty: the vote was withdrawn). Or why it is no vote.
 */
export type NetworkVote =
  { ok: true; submitted: DesirabilityItem[]; jobs: JobView[] } | { ok: false; reason: string };

/**
 * Checks a preferences file by the submission rules (either format, weights > 0, …). An empty
 * list withdraws a vote, and so does `{}`, what the subnet's first uploader wrote for it.
 */
export function readNetworkVote(file: PreferencesAtCommit, path: string, sha: string): NetworkVote {
  switch (file.kind) {
    case 'no-commit':
      return { ok: false, reason: `commit ${sha} is not in the Gravity repository` };
    case 'no-file':
      return { ok: false, reason: `commit ${sha} has no ${path}` };
    case 'too-large':
      return { ok: false, reason: `${path} at ${sha} is too large (${file.bytes} bytes)` };
  }
  let value: unknown;
  try {
    value = JSON.parse(file.text);
  } catch (error) {
    return {
      ok: false,
      reason: `${path} at ${sha} is not valid JSON: ${(error as Error).message}`,
    };
  }
  if (isRecord(value) && Object.keys(value).length === 0)
    return { ok: true, submitted: [], jobs: [] };
  const parsed = parseDesirabilityList(value, [], MAX_DESIRABILITY_JOBS);
  if (!parsed.ok) {
    const quoted = parsed.errors
      .slice(0, QUOTED_VIOLATIONS)
      .map((error) => `${JSON.stringify(error.loc)}: ${error.msg}`);
    const more = parsed.errors.length - quoted.length;
    return {
      ok: false,
      reason:
        `${path} at ${sha} breaks the submission rules: ${quoted.join('; ')}` +
        (more > 0 ? ` (and ${more} more)` : ''),
    };
  }
  return { ok: true, submitted: parsed.value.submitted, jobs: parsed.value.jobs.map(toJobView) };
}

/**
 * Whether the network holds the same vote as the local one: the same jobs (id and params) with
 * the same normalized weights, in any order. No local vote matches a withdrawn one.
 */
export function sameVote(local: readonly JobView[], network: readonly JobView[]): boolean {
  if (local.length !== network.length) return false;
  const key = (job: JobView) => `${job.id}\u0000${paramsKey(job.params)}`;
  const weights = new Map(network.map((job) => [key(job), job.weight]));
  // The local jobs may be part of a vote (its published jobs): their weights sum to less than 1.
  const total = local.reduce((sum, job) => sum + job.weight, 0);
  return local.every((job) => {
    const weight = weights.get(key(job));
    return weight !== undefined && Math.abs(weight - job.weight / total) <= WEIGHT_TOLERANCE;
  });
}
