import { ApiProperty, ApiSchema } from '@nestjs/swagger';

@ApiSchema({ name: 'RepoNamesResponse' })
export class RepoNamesResponseDto {
  @ApiProperty({
    type: 'integer',
    format: 'int32',
    minimum: 0,
    description: 'Number of repository names',
    example: 2,
  })
  count: number;

  @ApiProperty({
    description:
      'Sorted, unique repository names, without surrounding white space (and without `no_dataset_provided`)',
    type: [String],
    example: ['alice/x-dataset', 'bob/reddit-dataset'],
  })
  repo_names: string[];
}
