import { ApiPropertyOptional } from '@nestjs/swagger';
import { IsIn, IsOptional } from 'class-validator';
import { DATASET_FORMATS, DatasetFormat } from '../task.types';

export class DatasetQueryDto {
  @ApiPropertyOptional({
    enum: DATASET_FORMATS,
    default: 'jsonl',
    description:
      '`jsonl`: gzip-compressed JSON lines (`application/gzip`); `parquet`: the same rows as Parquet ' +
      '(`application/vnd.apache.parquet`), one row per item with flat, typed columns',
  })
  @IsOptional()
  @IsIn(DATASET_FORMATS)
  format?: DatasetFormat;
}
