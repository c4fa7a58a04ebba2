import { ApiProperty, ApiSchema } from '@nestjs/swagger';

@ApiSchema({ name: 'LabelSize' })
export class LabelSizeDto {
  @ApiProperty({ description: 'Label (lower case): `#hashtag` for X, `r/subreddit` for Reddit', example: '#bitcoin' })
  label_value: string;

  @ApiProperty({ description: 'Bytes held by all miners under this label', example: 123456789 })
  content_size_bytes: number;

  @ApiProperty({ description: 'Bytes weighted by the credibility (0..1) of the miner holding them', example: 98765432 })
  adj_content_size_bytes: number;
}

@ApiSchema({ name: 'AgeSize' })
export class AgeSizeDto {
  @ApiProperty({ description: 'Time bucket id = floor(unix seconds / 3600), i.e. whole hours since the epoch (UTC)', example: 494300 })
  time_bucket_id: number;

  @ApiProperty({ example: 123456789 })
  content_size_bytes: number;

  @ApiProperty({ example: 98765432 })
  adj_content_size_bytes: number;
}

@ApiSchema({ name: 'LabelBytes' })
export class LabelBytesDto {
  @ApiProperty({ description: 'The normalized label', example: '#bitcoin' })
  label: string;

  @ApiProperty({ description: 'Sum of content size bytes for the label', example: 123456789 })
  total_bytes: number;

  @ApiProperty({ description: 'Sum of credibility-adjusted bytes for the label', example: 98765432.5 })
  adj_total_bytes: number;
}
