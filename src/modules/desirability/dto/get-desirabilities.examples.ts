import { DESIRABILITY_REQUEST_EXAMPLE } from './desirability-request.dto';

/*
 * Whole answers of get_desirabilities: assembled from its items' `anyOf`, Swagger UI showed one
 * array mixing a job, a legacy entry, a GravityJob of "string"s and `{"additionalProp1": {}}`,
 * an answer the service never sends (a Swagger UI audit).
 */

/** A job of the aggregate, its params in full (the five that make a job). */
function job(
  id: string,
  weight: number,
  platform: string,
  label: string | null,
  keyword: string | null,
) {
  return {
    id,
    weight,
    params: { platform, label, keyword, post_start_datetime: null, post_end_datetime: null },
  };
}

export const GET_DESIRABILITIES_EXAMPLES = {
  aggregate: {
    summary: "The aggregate's first page as jobs, heaviest first (limit=3)",
    value: [
      job('tao-x', 0.412, 'x', '#tao', null),
      job('default-x-bitcoin', 0.048, 'x', '#bitcoin', null),
      job('btc-halving-x', 0.021, 'x', '#bitcoin', 'halving'),
    ],
  },
  legacy: {
    summary: 'The aggregate as legacy entries (format=legacy)',
    value: [{ source_name: 'x', label_weights: { '#tao': 0.412, '#bitcoin': 0.069 } }],
  },
  submission: {
    summary: "A validator's submission, as submitted (hotkey)",
    value: DESIRABILITY_REQUEST_EXAMPLE,
  },
};
