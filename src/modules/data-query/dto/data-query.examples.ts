import type { RedditItemDto } from './reddit-item.dto';
import type { XItemDto } from './x-item.dto';
import type { DataQueryRequestDto } from './data-query-request.dto';
import type { DataQueryResponseDto, OnDemandMetaDto } from './data-query-response.dto';
import type { SourceName } from '../../../network/sources';

/**
 * Examples of the on-demand operation. The request examples return items on the devnet that
 * `npm start` runs in development (its hashtags and subreddits, no fixed dates): the first try
 * in the Swagger UI shows data. test/e2e/docs.e2e-spec.ts sends each one to a devnet.
 */
export const QUERY_REQUEST_EXAMPLES: Record<
  string,
  { summary: string; value: DataQueryRequestDto }
> = {
  xHashtag: {
    summary: 'X posts with #bitcoin, newest first',
    value: { source: 'x', keywords: ['#bitcoin'], limit: 10 },
  },
  redditSubreddit: {
    summary: 'Posts and comments of r/Bitcoin',
    value: { source: 'reddit', keywords: ['r/Bitcoin'], limit: 10 },
  },
  xAnyKeyword: {
    summary: 'X posts with #bitcoin or #ethereum (keyword_mode any)',
    value: { source: 'x', keywords: ['#bitcoin', '#ethereum'], keyword_mode: 'any', limit: 10 },
  },
};

export const X_ITEM: XItemDto = {
  text: 'Block reward halves again soon. #Bitcoin #crypto',
  datetime: '2026-11-20T14:03:51+00:00',
  uri: 'https://x.com/satoshi_fan/status/2123779355833393728',
  source: 'X',
  label: '#bitcoin',
  content_size_bytes: 612,
  tweet: {
    id: '2123779355833393728',
    like_count: 42,
    retweet_count: 7,
    reply_count: 3,
    quote_count: 1,
    view_count: 5310,
    bookmark_count: 4,
    language: 'en',
    hashtags: ['#Bitcoin', '#crypto'],
    is_retweet: false,
    is_reply: false,
    is_quote: false,
    conversation_id: '2123779355833393728',
    in_reply_to_user_id: null,
    in_reply_to_username: null,
    quoted_tweet_id: null,
  },
  user: {
    id: '1420000001',
    username: 'satoshi_fan',
    display_name: 'Satoshi Fan',
    verified: false,
    user_blue_verified: true,
    followers_count: 1523,
    following_count: 311,
    user_description: 'Stacking sats since 2017.',
    user_location: null,
    profile_image_url: 'https://pbs.twimg.com/profile_images/1420000001/AbCd1234_normal.jpg',
    cover_picture_url: null,
  },
  media: ['https://pbs.twimg.com/media/GdA1b2C3.jpg'],
  content: 'Block reward halves again soon. #Bitcoin #crypto',
};

const REDDIT_POST: RedditItemDto = {
  uri: 'https://www.reddit.com/r/Bitcoin/comments/x1y2z3/halving_day/',
  datetime: '2026-11-20T14:03:51+00:00',
  source: 'REDDIT',
  label: 'r/bitcoin',
  content_size_bytes: 402,
  id: 't3_x1y2z3',
  url: 'https://www.reddit.com/r/Bitcoin/comments/x1y2z3/halving_day/',
  username: 'hodl_forever',
  communityName: 'r/Bitcoin',
  body: 'What are you all expecting this time?',
  createdAt: '2026-11-20T14:03:00+00:00',
  dataType: 'post',
  title: 'Halving day',
  parentId: null,
  media: null,
  is_nsfw: false,
  score: 187,
  upvote_ratio: 0.94,
  num_comments: 23,
  content: 'Halving day\n\nWhat are you all expecting this time?',
};

const REDDIT_COMMENT: RedditItemDto = {
  uri: 'https://www.reddit.com/r/Bitcoin/comments/x1y2z3/comment/k9l8m7/',
  datetime: '2026-11-20T15:10:02+00:00',
  source: 'REDDIT',
  label: 'r/bitcoin',
  content_size_bytes: 371,
  id: 't1_k9l8m7',
  url: 'https://www.reddit.com/r/Bitcoin/comments/x1y2z3/comment/k9l8m7/',
  username: 'stack_sats',
  communityName: 'r/Bitcoin',
  body: 'Same as last time: nothing, then everything.',
  createdAt: '2026-11-20T15:10:00+00:00',
  dataType: 'comment',
  title: null,
  parentId: 't3_x1y2z3',
  media: null,
  is_nsfw: false,
  score: 31,
  upvote_ratio: null,
  num_comments: null,
  content: 'Same as last time: nothing, then everything.',
};

function meta(source: SourceName, items: number): OnDemandMetaDto {
  return {
    source,
    miners_queried: 5,
    miners_responded: 4,
    non_responsive_miners: 1,
    empty_response_miners: 0,
    validation_success_rate: '4/4',
    miners_failed: { count: 1, reasons: { timeout: 1 } },
    miners_without_budget: 0,
    items_returned: items,
    items_dropped_invalid: 0,
    // Of no items, none is shared.
    consensus: items === 0 ? 0 : 1,
    hedged_requests: 0,
    deadline_reached: false,
    processing_time_ms: 212,
    cache_hit: false,
    api_version: '1.0',
    no_data_available: items === 0,
    origin: 'live',
  };
}

export const QUERY_RESPONSE_EXAMPLES: Record<
  string,
  { summary: string; value: DataQueryResponseDto }
> = {
  xItems: {
    summary: 'X items',
    value: { status: 'success', data: [X_ITEM], meta: meta('X', 1) },
  },
  redditItems: {
    summary: 'A Reddit post (parentId null) and a comment (title null)',
    value: { status: 'success', data: [REDDIT_COMMENT, REDDIT_POST], meta: meta('REDDIT', 2) },
  },
  fromStoredData: {
    summary: 'Answered from the data miners store (none serves OnDemandRequest)',
    value: {
      status: 'success',
      // A stored X record keeps its minute only; its post id holds the second (README, "Item
      // times").
      data: [X_ITEM],
      meta: {
        ...meta('X', 1),
        miners_queried: 2,
        miners_responded: 2,
        non_responsive_miners: 0,
        validation_success_rate: '2/2',
        miners_failed: { count: 0, reasons: {} },
        origin: 'stored',
        stored: {
          coverage: 'complete',
          buckets_planned: 6,
          buckets_from_store: 4,
          buckets_fetched_now: 2,
          buckets_missing: 0,
          oldest_data_fetched_at: '2026-11-24T09:12:00.000Z',
        },
      },
    },
  },
  noMatch: {
    summary: 'Nothing matched: the only answer where no_data_available is true',
    value: {
      status: 'success',
      data: [],
      meta: { ...meta('X', 0), empty_response_miners: 4 },
    },
  },
  noMiner: {
    summary:
      'No miner could be asked (still HTTP 200; no_data_available false: nothing was looked for)',
    value: {
      status: 'error',
      data: [],
      // `error` first, where the service puts it.
      meta: {
        error: 'No miners available',
        ...meta('X', 0),
        miners_queried: 0,
        miners_responded: 0,
        non_responsive_miners: 0,
        validation_success_rate: '0/0',
        miners_failed: { count: 0, reasons: {} },
        processing_time_ms: 1,
        no_data_available: false,
      },
    },
  },
};
