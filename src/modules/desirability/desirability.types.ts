import { Source } from '../../common/source';
import { ValidationErrorItem } from '../../common/errors/validation-error-item';
import { TaskJob } from '../tasks/task.types';
import { DesirabilityItem } from './dto/desirability-request.dto';

/**
 * A position in the request, FastAPI style: `["body", "desirabilities", 3, "params", "platform"]`.
 */
export type Loc = (string | number)[];

/** A job of a vote, normalized, with its weight (the weights of one vote sum to 1). */
export interface WeightedJob extends TaskJob {
  weight: number;
  /** A label of a legacy entry: its id is generated (see legacy-job-id.ts). */
  legacy?: true;
}

/** A job in the public jobs format, as stored with a vote and as listed in the aggregate. */
export interface JobView {
  id: string;
  weight: number;
  params: JobParamsView;
}

export interface JobParamsView {
  platform: Source;
  label: string | null;
  keyword: string | null;
  post_start_datetime: string | null;
  post_end_datetime: string | null;
}

/** One entry of the legacy format: `{source_name, label_weights: {label: weight}}`. */
export interface LegacyDesirability {
  source_name: Source;
  label_weights: Record<string, number>;
}

/** A valid submission: what was sent, and the jobs it stands for. */
export interface ParsedSubmission {
  /**
   * The `desirabilities` list as submitted (unscaled; stored as jsonb, which orders an object's
   * keys its own way).
   */
  submitted: DesirabilityItem[];
  /** In submission order (a legacy entry gives one job per label), weights summing to 1. */
  jobs: WeightedJob[];
  /** Where each job came from, for errors found later (task registration conflicts). */
  locs: Loc[];
}

export type ParseResult<T> = { ok: true; value: T } | { ok: false; errors: ValidationErrorItem[] };

/**
 * A job with its keys in the declared order (`id, weight, params`; params as `JobParamsView`
 * lists them). Votes and the network aggregate are stored in jsonb, which keeps keys in its own
 * order (shorter first: `id, params, weight`; `label, keyword, platform, …`), so one aggregate
 * listed the owner's jobs in one order and the votes' in another (an audit's finding).
 */
export function inJobOrder(job: JobView): JobView {
  return { id: job.id, weight: job.weight, params: inParamsOrder(job.params) };
}

export function inParamsOrder(params: JobParamsView): JobParamsView {
  return {
    platform: params.platform,
    label: params.label,
    keyword: params.keyword,
    post_start_datetime: params.post_start_datetime,
    post_end_datetime: params.post_end_datetime,
  };
}

export function toJobView(job: WeightedJob): JobView {
  return {
    id: job.id,
    weight: job.weight,
    params: {
      platform: job.platform,
      label: job.label,
      keyword: job.keyword,
      post_start_datetime: job.postStart?.toISOString() ?? null,
      post_end_datetime: job.postEnd?.toISOString() ?? null,
    },
  };
}
