import { ApiProperty, ApiSchema } from '@nestjs/swagger';
import { MAX_LABEL_LENGTH, XItem, XTweet, XUser } from '../../../network/protocol';
import { CONTENT_SIZE_BYTES, COUNT, DATETIME, URI, URLS } from './item-fields';

/**
 * An X item in the shape of the subnet's hosted on-demand API (`api_version` 1.0), read from the
 * miner's `XContent` record. Each class `implements` its network type, so the compiler keeps the
 * document and the items in step.
 */

const TEXT = { type: String, nullable: true } as const;
const FLAG = { type: Boolean, nullable: true } as const;

@ApiSchema({ name: 'XUser', description: 'The author of an X post, as the record saw them' })
export class XUserDto implements XUser {
  @ApiProperty({ ...TEXT, description: 'Numeric user id', example: '1420000001' })
  id: string | null;

  @ApiProperty({ description: 'Handle, without `@`', example: 'satoshi_fan' })
  username: string;

  @ApiProperty({ ...TEXT, example: 'Satoshi Fan' })
  display_name: string | null;

  @ApiProperty({ ...FLAG, description: 'Legacy (organization) verification', example: false })
  verified: boolean | null;

  @ApiProperty({ ...FLAG, description: 'Paid (blue check) verification', example: true })
  user_blue_verified: boolean | null;

  @ApiProperty({ ...COUNT, example: 1523 })
  followers_count: number | null;

  @ApiProperty({ ...COUNT, example: 311 })
  following_count: number | null;

  @ApiProperty({ ...TEXT, description: 'Profile bio', example: 'Stacking sats since 2017.' })
  user_description: string | null;

  @ApiProperty({ ...TEXT, description: 'As the user wrote it', example: 'Lisbon' })
  user_location: string | null;

  @ApiProperty({
    ...TEXT,
    example: 'https://pbs.twimg.com/profile_images/1420000001/AbCd1234_normal.jpg',
  })
  profile_image_url: string | null;

  @ApiProperty({
    ...TEXT,
    example: 'https://pbs.twimg.com/profile_banners/1420000001/1712345678',
  })
  cover_picture_url: string | null;
}

@ApiSchema({ name: 'XTweet', description: 'The post itself: id, counters, language, kind, links' })
export class XTweetDto implements XTweet {
  @ApiProperty({ description: 'Numeric post id', example: '2123779355833393728' })
  id: string;

  @ApiProperty({ ...COUNT, example: 42 })
  like_count: number | null;

  @ApiProperty({ ...COUNT, example: 7 })
  retweet_count: number | null;

  @ApiProperty({ ...COUNT, example: 3 })
  reply_count: number | null;

  @ApiProperty({ ...COUNT, example: 1 })
  quote_count: number | null;

  @ApiProperty({ ...COUNT, example: 5310 })
  view_count: number | null;

  @ApiProperty({ ...COUNT, example: 4 })
  bookmark_count: number | null;

  @ApiProperty({
    ...TEXT,
    description: 'Language code as X tags the post (`en`, `ja`; `und` when undetermined)',
    example: 'en',
  })
  language: string | null;

  @ApiProperty({
    description: 'As written in the text (case preserved), each starting with `#`',
    type: [String],
    example: ['#Bitcoin', '#crypto'],
  })
  hashtags: string[];

  @ApiProperty({ ...FLAG, example: false })
  is_retweet: boolean | null;

  @ApiProperty({ ...FLAG, example: false })
  is_reply: boolean | null;

  @ApiProperty({ ...FLAG, example: false })
  is_quote: boolean | null;

  @ApiProperty({
    ...TEXT,
    description: 'Id of the first post of the thread',
    example: '2123779355833393728',
  })
  conversation_id: string | null;

  @ApiProperty({ ...TEXT, description: 'Replies: the id of the author replied to', example: null })
  in_reply_to_user_id: string | null;

  @ApiProperty({
    ...TEXT,
    description: 'Replies: the handle replied to, without `@`',
    example: null,
  })
  in_reply_to_username: string | null;

  @ApiProperty({ ...TEXT, description: 'Quotes: the id of the quoted post', example: null })
  quoted_tweet_id: string | null;
}

@ApiSchema({
  name: 'XItem',
  description:
    "A post on X, in the shape of the subnet's hosted on-demand API. Every field is present; " +
    "those the miner's record did not provide are null.",
})
export class XItemDto implements XItem {
  @ApiProperty({
    description: 'The text of the post',
    example: 'Block reward halves again soon. #Bitcoin #crypto',
  })
  text: string;

  @ApiProperty(DATETIME)
  datetime: string;

  @ApiProperty({ ...URI, example: 'https://x.com/satoshi_fan/status/2123779355833393728' })
  uri: string;

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

  @ApiProperty({ ...CONTENT_SIZE_BYTES, example: 612 })
  content_size_bytes: number | null;

  @ApiProperty({ type: XTweetDto })
  tweet: XTweetDto;

  @ApiProperty({ type: XUserDto })
  user: XUserDto;

  @ApiProperty({
    ...URLS,
    description:
      'URLs of the photos and videos, as the record lists them (`pbs.twimg.com` photos, ' +
      '`video.twimg.com` videos and GIFs): null when the record has no `media`, `[]` when it lists ' +
      'an empty one',
    example: ['https://pbs.twimg.com/media/GdA1b2C3.jpg'],
  })
  media: string[] | null;

  @ApiProperty({
    deprecated: true,
    description:
      'Deprecated: the same as `text` (its name before the hosted-API shapes); will be removed',
    example: 'Block reward halves again soon. #Bitcoin #crypto',
  })
  content: string;
}
