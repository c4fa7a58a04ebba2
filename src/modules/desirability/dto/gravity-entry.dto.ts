import { ApiProperty, ApiPropertyOptional, ApiSchema } from '@nestjs/swagger';
import type { SchemaObject } from '@nestjs/swagger';
import { MAX_DESIRABILITY_JOBS } from '../../../config/environment-variables';

/**
 * Entries of a validator's preferences file on the network that our submission rules would
 * refuse but the subnet's uploaders write (a platform we do not serve, a label as its user typed
 * it, a weight of 0, …): `get_desirabilities?hotkey=` answers the file as it is.
 */
const AS_IN_THE_FILE = 'As written in the validator’s file';

@ApiSchema({
  name: 'GravityJobParams',
  description: 'A job’s params as the subnet’s uploader writes them, unchecked',
})
export class GravityJobParamsDto {
  @ApiPropertyOptional({ type: String, nullable: true, description: AS_IN_THE_FILE })
  keyword?: string | null;

  @ApiPropertyOptional({ description: `${AS_IN_THE_FILE} (the uploader also takes youtube)` })
  platform?: string;

  @ApiPropertyOptional({ description: AS_IN_THE_FILE, example: 'bitcoin' })
  label?: string;

  @ApiPropertyOptional({ type: String, nullable: true, description: AS_IN_THE_FILE })
  post_start_datetime?: string | null;

  @ApiPropertyOptional({ type: String, nullable: true, description: AS_IN_THE_FILE })
  post_end_datetime?: string | null;
}

@ApiSchema({
  name: 'GravityJob',
  description:
    'With `hotkey`, network: a job of the validator’s file in the subnet’s uploader’s shape that this gateway’s ' +
    'submission rules would refuse, as written. The aggregate counts what the subnet’s reader counts of it ' +
    '(`GET /api/v1/desirabilities/network` says what was left out and why).',
})
export class GravityJobDto {
  @ApiPropertyOptional({ description: AS_IN_THE_FILE, example: 'yt-1' })
  id?: string;

  @ApiPropertyOptional({
    type: 'number',
    format: 'double',
    description: `${AS_IN_THE_FILE} (the subnet’s reader takes a missing weight as 1)`,
    example: 0.1,
  })
  weight?: number;

  @ApiPropertyOptional({ type: GravityJobParamsDto })
  params?: GravityJobParamsDto;
}

@ApiSchema({
  name: 'GravityLegacyDesirability',
  description:
    'With `hotkey`, network: a legacy entry of the validator’s file that this gateway’s submission rules ' +
    'would refuse, as written',
})
export class GravityLegacyDesirabilityDto {
  @ApiProperty({ description: AS_IN_THE_FILE, example: 'youtube' })
  source_name: string;

  @ApiProperty({
    description: `${AS_IN_THE_FILE}: label → weight`,
    type: 'object',
    additionalProperties: { type: 'number', format: 'double' },
    maxProperties: MAX_DESIRABILITY_JOBS,
    example: { '#tao': 0.5 },
  })
  label_weights: Record<string, number>;
}

/**
 * An entry the subnet's reader skips before reading its values: a job without params or without
 * keyword, platform or label, a label over 140 characters, a legacy entry in a file of jobs. The
 * file still counts, and `?hotkey=` answers it as written, so its values can be any JSON: neither
 * GravityJob's number nor its text describes them. An open object, documented as one, rather
 * than typed fields the answer does not keep to (`additionalProperties: true`: generators type
 * an object without properties as an empty one otherwise).
 */
export type GravitySkippedEntry = Record<string, unknown>;

export const GRAVITY_SKIPPED_ENTRY_SCHEMA: SchemaObject = {
  title: 'GravitySkippedEntry',
  description:
    'With `hotkey`, network: an entry the subnet’s reader skips (a job without params or without keyword, ' +
    'platform or label; a label over 140 characters; a legacy entry in a file of jobs), as written: its ' +
    'values are unchecked and may be of any JSON type. `GET /api/v1/desirabilities/network` lists it with why.',
  type: 'object',
  additionalProperties: true,
};
