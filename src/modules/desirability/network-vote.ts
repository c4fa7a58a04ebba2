import { isRecord } from '../../common/is-record';
import { storableText } from '../../common/validation/storable-text';
import { MAX_DESIRABILITY_JOBS } from '../../config/environment-variables';
import { PreferencesAtCommit } from '../../network/gravity/gravity-git';
import { paramsKey } from './desirability-aggregate';
import { JobView } from './desirability.types';
import { readGravityFile } from './gravity-file';
import { SubmittedItem } from './dto/desirability-request.dto';

/** Two weights closer than this are the same (a JSON round trip, a sum of 1 + ε scaled). */
const WEIGHT_TOLERANCE = 1e-9;

/**
 * A validator's preferences file read as the subnet's reader reads it (gravity-file.ts):
 * `submitted` is the file's list as it is, `jobs` the jobs counted here (none: the vote was
 * withdrawn, or none of its jobs is one we count), `notes` what was left out and why. Or why
 * the file is no vote.
 */
export type NetworkVote =
  | { ok: true; submitted: SubmittedItem[]; jobs: JobView[]; notes: string[] }
  | { ok: false; reason: string };

/**
 * Reads a preferences file. An empty list withdraws a vote, and so does `{}`, what the subnet's
 * first uploader wrote for it (the reader counts neither).
 */
export function readNetworkVote(file: PreferencesAtCommit, path: string, sha: string): NetworkVote {
  // Stored in the aggregate's jsonb and answered in a 404's detail: Postgres refuses U+0000 and
  // unpaired surrogates, which a note may quote from the file.
  const vote = readVote(file, path, sha);
  return vote.ok
    ? { ...vote, notes: vote.notes.map(storableText) }
    : { ok: false, reason: storableText(vote.reason) };
}

function readVote(file: PreferencesAtCommit, path: string, sha: string): NetworkVote {
  switch (file.kind) {
    case 'no-commit':
      return { ok: false, reason: `commit ${sha} is not in the Gravity repository` };
    case 'no-file':
      return { ok: false, reason: `commit ${sha} has no ${path}` };
    case 'too-large':
      return { ok: false, reason: `${path} at ${sha} is too large (${file.bytes} bytes)` };
    case 'not-utf8':
      return {
        ok: false,
        reason: `${path} at ${sha} is not UTF-8 text (the subnet's reader fails on it)`,
      };
    case 'file':
      break;
  }
  // No JSON text holds it raw.
  if (file.text.includes('\u0000'))
    return { ok: false, reason: `${path} at ${sha} is not valid JSON: it holds a NUL character` };
  let value: unknown;
  try {
    value = JSON.parse(file.text);
  } catch (error) {
    return { ok: false, reason: `${path} at ${sha} is not valid JSON${positionOf(error)}` };
  }
  if (isRecord(value) && Object.keys(value).length === 0)
    return { ok: true, submitted: [], jobs: [], notes: [] };
  if (!Array.isArray(value))
    return { ok: false, reason: `${path} at ${sha} is not a list of jobs` };
  if (value.length === 0) return { ok: true, submitted: [], jobs: [], notes: [] };
  const read = readGravityFile(value, MAX_DESIRABILITY_JOBS);
  if (!read.ok) return { ok: false, reason: `${path} at ${sha} is no vote: ${read.reason}` };
  return { ok: true, submitted: value as SubmittedItem[], jobs: read.jobs, notes: read.notes };
}

/**
 * Where JSON.parse stopped, when V8 says. Its message is not quoted: it may quote a snippet of
 * the file cut inside a surrogate pair (`"keyword": 🚀🚀…` unquoted), which jsonb refuses, and
 * one validator's file then failed every store of the aggregate (an audit's finding).
 */
function positionOf(error: unknown): string {
  const position = /at position (\d+)/.exec((error as Error).message)?.[1];
  return position === undefined ? '' : ` (at position ${position})`;
}

/**
 * Whether the network holds the same vote as the local one: the same jobs (id and params) with
 * the same weights, in any order. The local jobs are the published part of a vote, whose
 * weights are written as they are (summing to less than 1 when keyword-only jobs stayed
 * local), and read back as written. No local vote matches a withdrawn one.
 */
export function sameVote(local: readonly JobView[], network: readonly JobView[]): boolean {
  if (local.length !== network.length) return false;
  const key = (job: JobView) => `${job.id}\u0000${paramsKey(job.params)}`;
  const weights = new Map(network.map((job) => [key(job), job.weight]));
  return local.every((job) => {
    const weight = weights.get(key(job));
    return weight !== undefined && Math.abs(weight - job.weight) <= WEIGHT_TOLERANCE;
  });
}
