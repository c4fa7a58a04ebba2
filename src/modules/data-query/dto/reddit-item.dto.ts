import { ApiProperty, ApiSchema } from '@nestjs/swagger';
import { MAX_LABEL_LENGTH, RedditItem } from '../../../network/protocol';
import { CONTENT_SIZE_BYTES, COUNT, DATETIME, URI, URLS } from './item-fields';

@ApiSchema({
  name: 'RedditItem',
  description:
    "A Reddit post or comment, flat, in the shape of the subnet's hosted on-demand API. Every " +
    "field is present: those the miner's record did not provide are null; `title` is null for " +
    'comments, `parentId` null for posts.',
})
export class RedditItemDto implements RedditItem {
  @ApiProperty({
    ...URI,
    example: 'https://www.reddit.com/r/Bitcoin/comments/x1y2z3/halving_day/',
  })
  uri: string;

  @ApiProperty(DATETIME)
  datetime: string;

  @ApiProperty({ description: 'Always `REDDIT` for Reddit items', enum: ['REDDIT'] })
  source: 'REDDIT';

  @ApiProperty({
    description: 'The subreddit, `r/<name>` lower-cased',
    maxLength: MAX_LABEL_LENGTH,
    example: 'r/bitcoin',
  })
  label: string;

  @ApiProperty({ ...CONTENT_SIZE_BYTES, example: 402 })
  content_size_bytes: number | null;

  @ApiProperty({
    description: 'Reddit fullname: `t3_…` for posts, `t1_…` for comments',
    example: 't3_x1y2z3',
  })
  id: string;

  @ApiProperty({
    format: 'uri',
    description: 'Same as `uri`',
    example: 'https://www.reddit.com/r/Bitcoin/comments/x1y2z3/halving_day/',
  })
  url: string;

  @ApiProperty({ description: 'Author, without `u/`', example: 'hodl_forever' })
  username: string;

  @ApiProperty({ description: '`r/<Subreddit>` as Reddit spells it', example: 'r/Bitcoin' })
  communityName: string;

  @ApiProperty({
    description: 'Text of the post or comment; may be empty',
    example: 'What are you all expecting this time?',
  })
  body: string;

  @ApiProperty({
    format: 'date-time',
    description:
      "The record's time: `datetime` rounded down to the minute, as miners store it, written as `datetime` is (and as the hosted API answers it)",
    example: '2026-11-20T14:03:00+00:00',
  })
  createdAt: string;

  @ApiProperty({ enum: ['post', 'comment'], example: 'post' })
  dataType: 'post' | 'comment';

  @ApiProperty({
    type: String,
    nullable: true,
    description:
      "The record's title: posts have one; comments null (as miners write them). Passed through whatever the kind; null when absent or empty.",
    example: 'Halving day',
  })
  title: string | null;

  @ApiProperty({
    type: String,
    nullable: true,
    description:
      'Comments: the `id` of the post commented on; posts null (as miners write them). Passed through whatever the kind; null when absent.',
    example: null,
  })
  parentId: string | null;

  @ApiProperty({
    ...URLS,
    description:
      'URLs of images and videos, as the record lists them: null when the record has no `media`, ' +
      '`[]` when it lists an empty one',
    example: null,
  })
  media: string[] | null;

  @ApiProperty({ type: Boolean, nullable: true, example: false })
  is_nsfw: boolean | null;

  @ApiProperty({ ...COUNT, description: 'Upvotes minus downvotes', example: 187 })
  score: number | null;

  @ApiProperty({
    type: 'number',
    format: 'double',
    nullable: true,
    minimum: 0,
    maximum: 1,
    description: 'Share of upvotes; posts only (null on comments)',
    example: 0.94,
  })
  upvote_ratio: number | null;

  @ApiProperty({
    ...COUNT,
    description: 'Comments on the post; posts only (null on comments)',
    example: 23,
  })
  num_comments: number | null;

  @ApiProperty({
    deprecated: true,
    description:
      'Deprecated: posts: the title, a blank line, then the body (the title alone when the body ' +
      'is empty); comments: the body. Read `title` and `body` instead; will be removed.',
    example: 'Halving day\n\nWhat are you all expecting this time?',
  })
  content: string;
}
