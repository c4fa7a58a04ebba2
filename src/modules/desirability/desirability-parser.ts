import { TaskJob } from '../tasks/task.types';
import { composedLowerCase } from '../../common/characters';
import {
  Issues,
  parseDate,
  parseId,
  parseKeyword,
  parseLabel,
  parseSource,
  parseWeight,
} from './desirability-fields';
import { isRecord } from '../../common/is-record';
import { withUnprintablesEscaped } from '../../common/validation/control-characters';
import { decimalNumber } from '../../common/validation/decimal-number';
import { Source } from '../../common/source';
import { legacyJobId } from './legacy-job-id';
import { paramsKey } from './desirability-aggregate';
import { Loc, ParsedSubmission, ParseResult, toJobView, WeightedJob } from './desirability.types';
import { DesirabilityItem } from './dto/desirability-request.dto';
import { normalizedWeights } from './weight-sum';

const REQUEST_FIELDS = ['desirabilities'];
const JOB_FIELDS = ['id', 'weight', 'params'];
const PARAMS_FIELDS = ['platform', 'label', 'keyword', 'post_start_datetime', 'post_end_datetime'];
const LEGACY_FIELDS = ['source_name', 'label_weights'];

/** One job of a submission while it is being checked; `job` only when all of it is valid. */
interface Draft {
  /** The task id, when valid (given, or generated for a legacy label). */
  id: string | undefined;
  /** Where errors about the job as a whole point: its id, or a legacy entry's label. */
  loc: Loc;
  legacy: boolean;
  weight: number | undefined;
  /** Where errors about the weight point: the job's `weight`, or a legacy entry's label. */
  weightLoc: Loc;
  job: TaskJob | undefined;
}

/**
 * Checks a `set_desirabilities` body and turns it into normalized, weighted jobs. Every
 * violation is reported at once, each at its exact location. The item is a union of two
 * formats, which is why this walks the raw body instead of relying on class-validator.
 */
export function parseDesirabilityRequest(
  body: unknown,
  maxJobs = Infinity,
): ParseResult<ParsedSubmission> {
  if (body === undefined || body === null) {
    return { ok: false, errors: [{ loc: ['body'], msg: 'Field required', type: 'missing' }] };
  }
  if (!isRecord(body)) {
    const msg = 'Input should be a valid dictionary or object to extract fields from';
    return { ok: false, errors: [{ loc: ['body'], msg, type: 'model_attributes_type' }] };
  }
  const issues = new Issues();
  let parsed: ParseResult<ParsedSubmission> | undefined;
  if (!Object.hasOwn(body, 'desirabilities')) issues.missing(['body', 'desirabilities']);
  else
    parsed = parseDesirabilityList(
      body.desirabilities,
      ['body', 'desirabilities'],
      maxJobs,
      'resolved later',
    );
  if (parsed && !parsed.ok) issues.items.push(...parsed.errors);
  issues.forbidExtra(body, REQUEST_FIELDS, ['body']);
  if (issues.items.length > 0 || !parsed?.ok) return { ok: false, errors: issues.items };
  return parsed;
}

/**
 * What a legacy label's generated id is when a list is parsed: `'final'`, its first
 * generation's, the id it keeps (the owner's default list, never registered); or `'resolved
 * later'`, a submission's, whose labels take their current generation's id when registered,
 * skipping the ids given to the submission's jobs (withCurrentLegacyIds). Only a final id is
 * held against the jobs' given ids here; a resolved one is by legacyIdClashes.
 */
export type LegacyIds = 'final' | 'resolved later';

/**
 * Checks a list of desirabilities in either format (items may be mixed). An item with
 * `source_name` or `label_weights` and no `params` is a legacy entry; any other is a job.
 * Weights are normalized to sum to 1 over the whole list. At most `maxJobs` jobs, each label
 * of a legacy entry counting as one (checked before the items, so a huge list costs little).
 */
export function parseDesirabilityList(
  value: unknown,
  loc: Loc,
  maxJobs = Infinity,
  legacyIds: LegacyIds = 'final',
): ParseResult<ParsedSubmission> {
  const issues = new Issues();
  if (!Array.isArray(value)) {
    issues.add(loc, 'list_type', 'Input should be a valid list');
    return { ok: false, errors: issues.items };
  }
  const count = countJobs(value);
  if (count > maxJobs) {
    issues.add(
      loc,
      'too_long',
      `List should have at most ${maxJobs} jobs after validation, not ${count} (each label of a legacy entry is a job)`,
      { field_type: 'List', max_length: maxJobs, actual_length: count },
    );
    return { ok: false, errors: issues.items };
  }
  const drafts = value.flatMap((item, index) => parseItem(item, [...loc, index], issues));
  checkUniqueJobs(drafts, legacyIds, issues);
  const jobs = issues.items.length > 0 ? [] : normalizeWeights(drafts, issues);
  if (issues.items.length > 0) return { ok: false, errors: issues.items };
  return {
    ok: true,
    value: {
      submitted: value.map(withWeightsRead),
      jobs,
      locs: drafts.map((draft) => draft.loc),
    },
  };
}

/**
 * An item as submitted, its weights as the numbers they were read as (`"0.5"` is kept as 0.5),
 * so that the vote answered back is in the document's shape. Only valid items get here.
 */
function withWeightsRead(item: unknown): DesirabilityItem {
  const read = { ...(item as Record<string, unknown>) };
  if (Object.hasOwn(read, 'weight')) read.weight = decimalNumber(read.weight);
  if (isRecord(read.label_weights))
    read.label_weights = Object.fromEntries(
      Object.entries(read.label_weights).map(([label, weight]) => [label, decimalNumber(weight)]),
    );
  return read as unknown as DesirabilityItem;
}

/** Jobs a list would give: one per item, or one per label of a legacy entry. */
function countJobs(items: readonly unknown[]): number {
  return items.reduce<number>((total, item) => {
    const weights =
      isRecord(item) && !Object.hasOwn(item, 'params') ? item.label_weights : undefined;
    return total + (isRecord(weights) ? Math.max(1, Object.keys(weights).length) : 1);
  }, 0);
}

function parseItem(item: unknown, loc: Loc, issues: Issues): Draft[] {
  if (!isRecord(item)) {
    issues.dictType(loc);
    return [];
  }
  const legacy =
    !Object.hasOwn(item, 'params') &&
    (Object.hasOwn(item, 'source_name') || Object.hasOwn(item, 'label_weights'));
  return legacy ? parseLegacyItem(item, loc, issues) : [parseJobItem(item, loc, issues)];
}

function parseJobItem(item: Record<string, unknown>, loc: Loc, issues: Issues): Draft {
  const id = required(item, 'id', loc, issues, parseId);
  const weight = required(item, 'weight', loc, issues, parseWeight);
  const params = required(item, 'params', loc, issues, parseParams);
  issues.forbidExtra(item, JOB_FIELDS, loc);
  const job = id !== undefined && params ? { id, ...params } : undefined;
  return { id, loc: [...loc, 'id'], legacy: false, weight, weightLoc: [...loc, 'weight'], job };
}

function parseParams(value: unknown, loc: Loc, issues: Issues): Omit<TaskJob, 'id'> | undefined {
  if (!isRecord(value)) return issues.dictType(loc);
  const platform = required(value, 'platform', loc, issues, parseSource);
  const label = parseLabel(value.label, platform, [...loc, 'label'], issues);
  const keyword = parseKeyword(value.keyword, [...loc, 'keyword'], issues);
  const postStart = parseDate(value.post_start_datetime, [...loc, 'post_start_datetime'], issues);
  const postEnd = parseDate(value.post_end_datetime, [...loc, 'post_end_datetime'], issues);
  issues.forbidExtra(value, PARAMS_FIELDS, loc);

  let valid = platform !== undefined && label !== undefined && keyword !== undefined;
  if (label === null && keyword === null) {
    issues.value(loc, 'a job needs a label or a keyword');
    valid = false;
  }
  if (postStart && postEnd && postStart >= postEnd) {
    issues.value(
      [...loc, 'post_start_datetime'],
      'post_start_datetime must be before post_end_datetime',
    );
    valid = false;
  }
  if (!valid || postStart === undefined || postEnd === undefined) return undefined;
  return { platform: platform!, label: label!, keyword: keyword!, postStart, postEnd };
}

/**
 * A legacy entry gives one job per label, with a generated id (its first generation's:
 * legacy-job-id.ts).
 */
function parseLegacyItem(item: Record<string, unknown>, loc: Loc, issues: Issues): Draft[] {
  const platform = required(item, 'source_name', loc, issues, parseSource);
  const drafts = required(item, 'label_weights', loc, issues, (weights, weightsLoc) =>
    parseLabelWeights(weights, platform, weightsLoc, issues),
  );
  issues.forbidExtra(item, LEGACY_FIELDS, loc);
  return drafts ?? [];
}

function parseLabelWeights(
  value: unknown,
  platform: Source | undefined,
  loc: Loc,
  issues: Issues,
): Draft[] | undefined {
  if (!isRecord(value)) return issues.dictType(loc);
  const entries = Object.entries(value);
  if (entries.length === 0) {
    const msg = 'Dictionary should have at least 1 item after validation';
    return issues.add(loc, 'too_short', msg, {
      field_type: 'Dictionary',
      min_length: 1,
      actual_length: 0,
    });
  }
  return entries.map(([key, weightValue]) => {
    const entryLoc = [...loc, key];
    // pydantic reports a dictionary key's errors under `[key]`, its value's at the key itself.
    const label = parseLabel(key, platform, [...entryLoc, '[key]'], issues);
    const weight = parseWeight(weightValue, entryLoc, issues);
    const draft = { loc: entryLoc, legacy: true, weight, weightLoc: entryLoc };
    if (!platform || !label) return { ...draft, id: undefined, job: undefined };
    const id = legacyJobId(platform, label);
    return {
      ...draft,
      id,
      job: { id, platform, label, keyword: null, postStart: null, postEnd: null },
    };
  });
}

/**
 * Ids, and params, are unique within a submission: a job repeating an earlier job's id, or its
 * params under another id (`#BTC` and `#btc` normalize alike), is a value error at the
 * repetition. Jobs with the same params are one task (as the subnet's reader keys them): two
 * ids would register and collect it twice. A label's generated id that is `'resolved later'` is
 * held against the other labels' alone: its first generation's is not the id it will have when
 * a job of the submission is given that one (it is skipped), so the ids it resolves to are
 * checked then (legacyIdClashes).
 */
function checkUniqueJobs(drafts: readonly Draft[], legacyIds: LegacyIds, issues: Issues): void {
  const given = new Set<string>();
  const generated = legacyIds === 'final' ? given : new Set<string>();
  // A job's params, and the earlier job that has them as its refusal names it.
  const params = new Map<string, string>();
  for (const draft of drafts) {
    if (draft.id === undefined) continue;
    // A label's id to be resolved is not named: its first generation's may not be the id it
    // gets, and may be the very id another job of the submission gives (an audit's finding).
    const subject = !draft.legacy
      ? `id '${draft.id}'`
      : legacyIds === 'final'
        ? `this label (generated id '${draft.id}')`
        : 'this label';
    const ids = draft.legacy ? generated : given;
    const key = draft.job && jobParamsKey(draft.job);
    const earlier = key === undefined ? undefined : params.get(key);
    if (ids.has(draft.id))
      issues.value(draft.loc, `${subject} is already used by another job of this submission`);
    else if (earlier !== undefined)
      issues.value(
        draft.loc,
        `the params of ${subject} are already used by another job of this submission (${earlier})`,
      );
    ids.add(draft.id);
    if (key !== undefined && earlier === undefined)
      params.set(
        key,
        draft.legacy && legacyIds === 'resolved later'
          ? `the ${draft.job!.platform} label '${withUnprintablesEscaped(draft.job!.label ?? '')}' of a legacy entry`
          : `id '${draft.id}'`,
      );
  }
}

/**
 * Two jobs of a submission are one when their params are, the keyword compared case-insensitively:
 * it is matched so, and `Bitcoin` beside `BITCOIN` was collected twice (a Unicode audit's
 * finding). The network's own key (`paramsKey`, the subnet's reader's) keeps the case.
 */
function jobParamsKey(job: TaskJob): string {
  return paramsKey(
    toJobView({
      ...job,
      keyword: job.keyword === null ? null : composedLowerCase(job.keyword),
      weight: 0,
    }).params,
  );
}

/**
 * Weights over their sum, as the subnet's uploader divides them (normalizedWeights). A weight so
 * small beside the others that its share underflows to 0 is a value error at it: a job of weight
 * 0 is refused by the subnet's uploader (`gt=0`), so the vote could never be published, and it
 * would weigh nothing here.
 */
function normalizeWeights(drafts: readonly Draft[], issues: Issues): WeightedJob[] {
  const weights = normalizedWeights(drafts.map((draft) => draft.weight!));
  return drafts.map((draft, index) => {
    const weight = weights[index];
    if (!(weight > 0 && Number.isFinite(weight)))
      issues.value(
        draft.weightLoc,
        'weight is too small beside the other weights of this submission: divided by their sum ' +
          "it is 0, and a job's normalized weight must be greater than 0",
      );
    return { ...draft.job!, weight, ...(draft.legacy ? { legacy: true as const } : {}) };
  });
}

function required<T>(
  object: Record<string, unknown>,
  field: string,
  loc: Loc,
  issues: Issues,
  parse: (value: unknown, loc: Loc, issues: Issues) => T | undefined,
): T | undefined {
  if (!Object.hasOwn(object, field)) return issues.missing([...loc, field]);
  return parse(object[field], [...loc, field], issues);
}
