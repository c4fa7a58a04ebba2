import { ApiProperty, ApiPropertyOptions, ApiSchema, getSchemaPath } from '@nestjs/swagger';
import {
  MAX_LABEL_LENGTH,
  RedditItem,
  XItem,
  XMedia,
  XTweet,
  XUser,
} from '../../../network/protocol';

/**
 * The items on-demand queries and query_bucket answer with (and task datasets hold), as the
 * network builds them (network/sn13/entities.ts). Each class `implements` its network type and
 * services assign the network's items to these without a cast, so the compiler keeps the
 * document and the items in step. Fields a miner's record lacks are null, never absent.
 */

const COUNT = { type: 'integer', format: 'int64', nullable: true } as const;

@ApiSchema({ name: 'XUser', description: 'The author of an X post' })
export class XUserDto implements XUser {
  @ApiProperty({ description: 'Handle, without `@`', example: 'satoshi_fan' })
  username: string;

  @ApiProperty({ type: String, nullable: true, example: 'Satoshi Fan' })
  display_name: string | null;

  @ApiProperty({ type: String, nullable: true, description: 'Numeric id', example: '1420000001' })
  id: string | null;

  @ApiProperty({ type: Boolean, nullable: true, example: false })
  verified: boolean | null;

  @ApiProperty({ ...COUNT, example: 1523 })
  followers_count: number | null;

  @ApiProperty({ ...COUNT, example: 311 })
  following_count: number | null;
}

@ApiSchema({ name: 'XTweet', description: 'The post itself: id, counters, hashtags, kind' })
export class XTweetDto implements XTweet {
  @ApiProperty({ description: 'Numeric post id', example: '1861234567890123456' })
  id: string;

  @ApiProperty({ ...COUNT, example: 42 })
  like_count: number | null;

  @ApiProperty({ ...COUNT, example: 7 })
  retweet_count: number | null;

  @ApiProperty({ ...COUNT, example: 3 })
  reply_count: number | null;

  @ApiProperty({ ...COUNT, example: 1 })
  quote_count: number | null;

  @ApiProperty({
    description: 'As written in the text (case preserved), each starting with `#`',
    type: [String],
    example: ['#Bitcoin', '#crypto'],
  })
  hashtags: string[];

  @ApiProperty({ type: Boolean, nullable: true, example: false })
  is_retweet: boolean | null;

  @ApiProperty({ type: Boolean, nullable: true, example: false })
  is_reply: boolean | null;

  @ApiProperty({ type: Boolean, nullable: true, example: false })
  is_quote: boolean | null;

  @ApiProperty({
    type: String,
    nullable: true,
    description: 'Id of the first post of the thread',
    example: '1861234567890123456',
  })
  conversation_id: string | null;
}

@ApiSchema({ name: 'XMedia' })
export class XMediaDto implements XMedia {
  @ApiProperty({ format: 'uri', example: 'https://pbs.twimg.com/media/GdA1b2C3.jpg' })
  url: string;

  @ApiProperty({
    description:
      'Read from the URL: `video.twimg.com/tweet_video/` is an animated GIF, other `video.twimg.com` ' +
      'URLs are videos, anything else a photo',
    enum: ['photo', 'video', 'animated_gif'],
    example: 'photo',
  })
  type: XMedia['type'];
}

const URI = { format: 'uri', description: 'Where the item is published; unique per item' } as const;
const DATETIME = {
  format: 'date-time',
  description: 'When it was posted (UTC)',
  example: '2026-11-20T14:03:51.000Z',
} as const;

@ApiSchema({ name: 'XItem', description: 'A post on X' })
export class XItemDto implements XItem {
  @ApiProperty({ ...URI, example: 'https://x.com/satoshi_fan/status/1861234567890123456' })
  uri: string;

  @ApiProperty(DATETIME)
  datetime: string;

  @ApiProperty({ description: 'Always `X` for X items', enum: ['X'], example: 'X' })
  source: 'X';

  @ApiProperty({
    type: String,
    nullable: true,
    maxLength: MAX_LABEL_LENGTH,
    description: 'The first hashtag, lower-cased; null when the post has none',
    example: '#bitcoin',
  })
  label: string | null;

  @ApiProperty({
    description: 'The text of the post',
    example: 'Block reward halves again soon. #Bitcoin #crypto',
  })
  content: string;

  @ApiProperty({ type: XUserDto })
  user: XUserDto;

  @ApiProperty({ type: XTweetDto })
  tweet: XTweetDto;

  @ApiProperty({ type: [XMediaDto], description: 'Photos, videos and GIFs; empty when none' })
  media: XMediaDto[];
}

@ApiSchema({
  name: 'RedditItem',
  description:
    'A Reddit post or comment. Both kinds carry every field: `title` is null for comments, ' +
    '`parentId` null for posts.',
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

  @ApiProperty({
    description:
      'Posts: the title, a blank line, then the body (the title alone when the body is empty). Comments: the body.',
    example: 'Halving day\n\nWhat are you all expecting this time?',
  })
  content: string;

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
    type: String,
    nullable: true,
    description: 'Posts: the title. Comments: null.',
    example: 'Halving day',
  })
  title: string | null;

  @ApiProperty({
    format: 'date-time',
    description: 'Same as `datetime`',
    example: '2026-11-20T14:03:51.000Z',
  })
  createdAt: string;

  @ApiProperty({ enum: ['post', 'comment'], example: 'post' })
  dataType: 'post' | 'comment';

  @ApiProperty({
    type: String,
    nullable: true,
    description: 'Comments: the `id` of the post commented on. Posts: null.',
    example: null,
  })
  parentId: string | null;
}

export type DataItemDto = XItemDto | RedditItemDto;

/**
 * A list of items of either source: `oneOf` the two item schemas, told apart by `source`. The
 * class using it must register both with `@ApiExtraModels(XItemDto, RedditItemDto)`.
 */
export function dataItemsProperty(description: string): ApiPropertyOptions {
  return {
    description,
    type: 'array',
    items: {
      oneOf: [{ $ref: getSchemaPath(XItemDto) }, { $ref: getSchemaPath(RedditItemDto) }],
      discriminator: {
        propertyName: 'source',
        mapping: { X: getSchemaPath(XItemDto), REDDIT: getSchemaPath(RedditItemDto) },
      },
    },
  };
}
