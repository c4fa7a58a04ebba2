import { isRecord } from '../../common/is-record';
import { pythonFromIsoFormat } from '../../common/python-json';
import { Source } from '../../common/source';
import { isStorableText } from '../../common/validation/storable-text';
import { characterCount } from '../../common/characters';
import { Issues, MAX_ID_LENGTH, MAX_TEXT_LENGTH, parseId } from './desirability-fields';
import { JobView } from './desirability.types';
import { legacyJobId } from './legacy-job-id';
import { summedWeights } from './weight-sum';

/**
 * Reading another validator's preferences file as the subnet's reader takes it
 * (data-universe `dynamic_desirability/desirability_retrieval.py` at 000322e2, the newest
 * version we can read: `calculate_total_weights` and `to_lookup`), not by our submission rules:
 * those are for what we accept from our clients, and refused whole files the subnet counts. What
 * the reader skips, or its lookup ignores, is left out here too, one entry at a time, with the
 * reason; what would make the reader fail (and every validator reading the repository fall back to
 * the owner's list), or what the subnet's uploaders never write, makes the file no vote.
 * docs/decisions.md, "Reading the network's votes (issue 18)".
 */

/** A file read: the jobs counted, and what was left out or read otherwise, entry by entry. */
export type GravityFileReading =
  { ok: true; jobs: JobView[]; notes: string[] } | { ok: false; reason: string };

/** The platforms the subnet's lookup counts (`DataSource` names, lower case) that we serve. */
const COUNTED_PLATFORMS: readonly Source[] = ['x', 'reddit'];
const JOB_FIELDS = ['id', 'weight', 'params'];
const PARAMS_FIELDS = ['keyword', 'platform', 'label', 'post_start_datetime', 'post_end_datetime'];
/** The params the reader needs present (it skips a job without one of them). */
const KEYED_PARAMS = ['keyword', 'platform', 'label'];
const LEGACY_FIELDS = ['source_name', 'label_weights'];

/** A job as the reader sees it, before the checks that may leave it out. */
interface Candidate {
  /** How a note names it: `entry 3 (id "yt")`, `entry 0, label "#tao"`. */
  name: string;
  /** Absent from the file, or (legacy) for a platform not counted. */
  id: string | undefined;
  weight: number;
  platform: string;
  label: string;
  keyword: string | null;
  dates: [string | null, string | null];
}

class Refusal extends Error {}

/**
 * The jobs of a non-empty list of entries, weights as written while they sum to at most 1 and
 * scaled down to sum to 1 above (no validator weighs more than its stake share), or why the
 * file is no vote.
 */
export function readGravityFile(entries: readonly unknown[], maxJobs: number): GravityFileReading {
  const notes: string[] = [];
  const jobs: JobView[] = [];
  try {
    // In the file's order: a job, or the note saying why the reader skips an entry.
    const read = isLegacyEntry(entries[0])
      ? entries.flatMap((entry, index) => legacyCandidates(entry, index))
      : entries.map((entry, index) => jobCandidate(entry, index));
    const count = read.filter((item) => typeof item !== 'string').length;
    if (count > maxJobs) throw new Refusal(`it has ${count} jobs, more than ${maxJobs}`);
    for (const item of read) {
      if (typeof item === 'string') {
        notes.push(item);
        continue;
      }
      const problem = leftOut(item);
      if (problem) notes.push(`${item.name}: ${problem}`);
      else jobs.push(toJob(item, notes));
    }
  } catch (error) {
    if (error instanceof Refusal) return { ok: false, reason: error.message };
    throw error;
  }
  return { ok: true, jobs: scaledDown(jobs), notes };
}

/** The reader converts the whole file from the legacy format when its first entry is one. */
function isLegacyEntry(entry: unknown): entry is Record<string, unknown> {
  return isRecord(entry) && LEGACY_FIELDS.every((field) => Object.hasOwn(entry, field));
}

function legacyCandidates(entry: unknown, index: number): (Candidate | string)[] {
  const at = `entry ${index}`;
  if (!isLegacyEntry(entry))
    throw new Refusal(
      `${at}: the subnet's reader fails on an entry without source_name and label_weights ` +
        'in a file whose first entry is in the legacy format',
    );
  unknownFields(entry, LEGACY_FIELDS, at);
  const { source_name: platform, label_weights: weights } = entry;
  if (typeof platform !== 'string') throw new Refusal(`${at}: source_name is not text`);
  if (!isRecord(weights)) throw new Refusal(`${at}: label_weights is not an object`);
  return Object.entries(weights).map(([label, weight]) => {
    const name = `${at}, label ${JSON.stringify(label)}`;
    // The reader converts every label to a job, then skips a long label before the weight.
    const skipped = longLabel(label);
    if (skipped) return `${name}: ${skipped}`;
    finiteWeight(weight, name);
    const id = COUNTED_PLATFORMS.includes(platform as Source)
      ? legacyJobId(platform as Source, label)
      : undefined;
    return { name, id, weight, platform, label, keyword: null, dates: [null, null] };
  });
}

/** The job an entry of a jobs file stands for, or why the reader skips it. */
function jobCandidate(entry: unknown, index: number): Candidate | string {
  const at = `entry ${index}`;
  if (!isRecord(entry)) throw new Refusal(`${at} is not an object`);
  if (
    !Object.hasOwn(entry, 'params') &&
    LEGACY_FIELDS.some((field) => Object.hasOwn(entry, field))
  ) {
    return `${at}: the subnet's reader skips a legacy entry in a file whose first entry is a job`;
  }
  unknownFields(entry, JOB_FIELDS, at);
  // The reader never reads an id, and takes a missing weight as 1.0.
  const { id, weight = 1, params } = entry;
  if (id !== undefined && typeof id !== 'string') throw new Refusal(`${at}: the id is not text`);
  const name = id === undefined ? at : `${at} (id ${JSON.stringify(id)})`;
  // The reader's order: it skips a job without params or keys, then one with a long label,
  // and only then reads the weight (which fails it when not a number).
  if (!Object.hasOwn(entry, 'params'))
    return `${name}: the subnet's reader skips a job without params`;
  if (!isRecord(params)) throw new Refusal(`${name}: params is not an object`);
  unknownFields(params, PARAMS_FIELDS, `${name}: params`);
  const missing = KEYED_PARAMS.filter((field) => !Object.hasOwn(params, field));
  if (missing.length > 0)
    return `${name}: the subnet's reader skips a job whose params lack ${missing.join(', ')}`;
  const skipped = longLabel(params.label);
  if (skipped) return `${name}: ${skipped}`;
  finiteWeight(weight, name);
  const { platform, label, keyword, post_start_datetime: start, post_end_datetime: end } = params;
  if (typeof platform !== 'string') throw new Refusal(`${name}: the platform is not text`);
  // The reader's aggregate passes a job without a label (it checks a label's length only when
  // there is one), but its lookup fails on it: `rewards/data.py` Job's label is text.
  if (typeof label !== 'string')
    throw new Refusal(
      `${name}: the label is ${label === null ? 'null' : 'not text'} (the subnet's lookup ` +
        'fails on a job without a label)',
    );
  for (const [field, value] of [
    ['keyword', keyword],
    ['post_start_datetime', start],
    ['post_end_datetime', end],
  ] as const)
    if (value !== null && value !== undefined && typeof value !== 'string')
      throw new Refusal(`${name}: ${field} is not text`);
  const text = (value: unknown) => (typeof value === 'string' ? value : null);
  return {
    name,
    id,
    weight,
    platform,
    label,
    keyword: text(keyword),
    dates: [text(start), text(end)],
  };
}

/**
 * Why the reader skips a label: over MAX_LABEL_LENGTH characters (code points, as Python's
 * `len`), checked only when there is a label (a truthy one: not null, not empty).
 */
function longLabel(label: unknown): string | undefined {
  return typeof label === 'string' && characterCount(label) > MAX_TEXT_LENGTH
    ? `the subnet's reader skips a label over ${MAX_TEXT_LENGTH} characters`
    : undefined;
}

/**
 * A weight the reader can add: a number (it fails on any other, such as the first uploader's
 * `[weight, date]` pairs), and a finite one (JSON's `1e400` is infinite in either language).
 * `true` and `false` it adds as 1 and 0 (Python's bool is an int), but no uploader writes one.
 */
function finiteWeight(weight: unknown, name: string): asserts weight is number {
  if (typeof weight === 'boolean')
    throw new Refusal(`${name}: the weight is ${weight}, which the subnet's uploaders never write`);
  if (typeof weight !== 'number')
    throw new Refusal(`${name}: the weight is not a number (the subnet's reader fails on it)`);
  if (!Number.isFinite(weight)) throw new Refusal(`${name}: the weight is not a finite number`);
}

/** Fields the subnet's uploaders never write: the file was made some other way. */
function unknownFields(object: Record<string, unknown>, known: readonly string[], at: string) {
  const unknown = Object.keys(object).filter((key) => !known.includes(key));
  if (unknown.length > 0)
    throw new Refusal(
      `${at}: ${unknown.map((key) => JSON.stringify(key)).join(', ')}, which the subnet's ` +
        'uploader never writes',
    );
}

/** Why a job of the file does not count here, or undefined when it does. */
function leftOut(candidate: Candidate): string | undefined {
  const { platform, label, keyword, id, weight } = candidate;
  if (!COUNTED_PLATFORMS.includes(platform as Source))
    return platform.toLowerCase() === 'x' || platform.toLowerCase() === 'reddit'
      ? `platform ${JSON.stringify(platform)}: the subnet's lookup counts "x" and "reddit" only, in lower case`
      : `platform ${JSON.stringify(platform)} is not one this gateway serves (x, reddit)`;
  if (label.length === 0) return 'an empty label names no data';
  if (keyword !== null && (keyword.length === 0 || characterCount(keyword) > MAX_TEXT_LENGTH))
    return `a keyword of 1..${MAX_TEXT_LENGTH} characters only (the subnet's uploader's rule)`;
  if (id === undefined || parseId(id, [], new Issues()) === undefined)
    return `no id this gateway can list it under (1..${MAX_ID_LENGTH} printable characters, no slashes)`;
  if (![id, label, keyword ?? ''].every(isStorableText))
    return 'text holding U+0000 or an unpaired surrogate, which cannot be stored';
  if (!(weight > 0))
    return 'a weight that is not above 0 adds nothing here (the subnet would subtract a negative one)';
  return undefined;
}

function toJob(candidate: Candidate, notes: string[]): JobView {
  const [start, end] = candidate.dates.map((value, index) => {
    if (value === null) return null;
    const date = readPythonDate(value);
    const field = index === 0 ? 'post_start_datetime' : 'post_end_datetime';
    if (!date)
      notes.push(
        `${candidate.name}: ${field} ${JSON.stringify(value)} is no date the subnet's reader ` +
          'reads (parse_iso_date): counted without it, as the reader drops it',
      );
    return date?.toISOString() ?? null;
  });
  return {
    id: candidate.id!,
    weight: candidate.weight,
    params: {
      platform: candidate.platform as Source,
      label: candidate.label,
      keyword: candidate.keyword,
      post_start_datetime: start,
      post_end_datetime: end,
    },
  };
}

/**
 * A date as the reader's `datetime_to_timebucket` reads it (data-universe
 * `common/utils.py` `parse_iso_date`: a final `Z` read as `+00:00`, then
 * `datetime.fromisoformat`, Python 3.10's: pythonFromIsoFormat).
 */
function readPythonDate(value: string): Date | undefined {
  return pythonFromIsoFormat(value.endsWith('Z') ? `${value.slice(0, -1)}+00:00` : value);
}

/** Weights as written while they sum to at most 1; above, divided by their sum. */
function scaledDown(jobs: JobView[]): JobView[] {
  const { weights, total } = summedWeights(jobs.map((job) => job.weight));
  const scale = total > 1 ? total : 1;
  return jobs.map((job, index) => ({ ...job, weight: weights[index] / scale }));
}
