import { ApiExtraModels, ApiProperty, ApiSchema, getSchemaPath } from '@nestjs/swagger';
import type { SchemaObject } from '@nestjs/swagger';
import { MAX_DESIRABILITY_JOBS } from '../../../config/environment-variables';
import { DesirabilityJobDto, LegacyDesirabilityDto } from './desirability-job.dto';
import {
  GravityJobDto,
  GravityLegacyDesirabilityDto,
  GravitySkippedEntry,
  GRAVITY_SKIPPED_ENTRY_SCHEMA,
} from './gravity-entry.dto';

/**
 * One entry of a vote as submitted, in either format: a vote may mix them, and a submission is
 * answered back as sent (the parser checked that each entry is one of the two), a weight given
 * as a string as the number it was read as.
 */
export type DesirabilityItem = DesirabilityJobDto | LegacyDesirabilityDto;

/** The schema of a DesirabilityItem. */
export const DESIRABILITY_ITEM_SCHEMA: SchemaObject = {
  oneOf: [
    { $ref: getSchemaPath(DesirabilityJobDto) },
    { $ref: getSchemaPath(LegacyDesirabilityDto) },
  ],
};

/**
 * An entry of a vote as `get_desirabilities?hotkey=` answers it: as submitted here, or, from
 * the network, as written in the validator's file, which may hold entries our rules refuse.
 */
export type SubmittedItem =
  DesirabilityItem | GravityJobDto | GravityLegacyDesirabilityDto | GravitySkippedEntry;

/**
 * The schema of a SubmittedItem (`anyOf`: an entry of either format is also in the uploader's
 * shape).
 */
export const SUBMITTED_ITEM_SCHEMA: SchemaObject = {
  anyOf: [
    { $ref: getSchemaPath(DesirabilityJobDto) },
    { $ref: getSchemaPath(LegacyDesirabilityDto) },
    { $ref: getSchemaPath(GravityJobDto) },
    { $ref: getSchemaPath(GravityLegacyDesirabilityDto) },
    GRAVITY_SKIPPED_ENTRY_SCHEMA,
  ],
};

/**
 * The request's example, and the answer DesirabilitySubmittedDto shows for it (a spec submits
 * it to the service and expects that answer): a job, a legacy entry, and a keyword-only job,
 * kept local.
 */
export const DESIRABILITY_REQUEST_EXAMPLE = [
  {
    id: 'tao-x',
    weight: 0.6,
    params: {
      platform: 'x',
      label: '#tao',
      keyword: null,
      post_start_datetime: null,
      post_end_datetime: null,
    },
  },
  { source_name: 'reddit', label_weights: { 'r/bittensor_': 0.3 } },
  {
    id: 'halving-x',
    weight: 0.1,
    params: {
      platform: 'x',
      label: null,
      keyword: 'halving',
      post_start_datetime: null,
      post_end_datetime: null,
    },
  },
];

/** Documents the body only: it is checked by DesirabilityRequestPipe (the item is a union). */
@ApiSchema({
  name: 'DesirabilityRequest',
  description:
    'This validator’s vote. It replaces its previous vote; an empty list withdraws it. Every job ' +
    'is registered as a scraping task active for seven days.',
})
@ApiExtraModels(DesirabilityJobDto, LegacyDesirabilityDto)
export class DesirabilityRequestDto {
  @ApiProperty({
    description:
      'Jobs `{id, weight, params}` or legacy entries `{source_name, label_weights}`, which may be ' +
      'mixed. Weights are normalized to sum to 1 over the whole list. At most DESIRABILITY_MAX_JOBS ' +
      'jobs (256 by default; each label of a legacy entry is a job).',
    type: 'array',
    maxItems: MAX_DESIRABILITY_JOBS,
    items: DESIRABILITY_ITEM_SCHEMA,
    example: DESIRABILITY_REQUEST_EXAMPLE,
  })
  desirabilities: (DesirabilityJobDto | LegacyDesirabilityDto)[];
}
