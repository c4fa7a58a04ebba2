import type { RedditItemDto, XItemDto } from './data-item.dto';
import type { DataQueryRequestDto } from './data-query-request.dto';
import type { DataQueryResponseDto, OnDemandMetaDto } from './data-query-response.dto';
import type { SourceName } from '../../../network/sn13/sources';

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
};

const X_ITEM: XItemDto = {
  uri: 'https://x.com/satoshi_fan/status/1861234567890123456',
  datetime: '2026-11-20T14:03:51.000Z',
  source: 'X',
  label: '#bitcoin',
  content: 'Block reward halves again soon. #Bitcoin #crypto',
  user: {
    username: 'satoshi_fan',
    display_name: 'Satoshi Fan',
    id: '1420000001',
    verified: false,
    followers_count: 1523,
    following_count: 311,
  },
  tweet: {
    id: '1861234567890123456',
    like_count: 42,
    retweet_count: 7,
    reply_count: 3,
    quote_count: 1,
    hashtags: ['#Bitcoin', '#crypto'],
    is_retweet: false,
    is_reply: false,
    is_quote: false,
    conversation_id: '1861234567890123456',
  },
  media: [{ url: 'https://pbs.twimg.com/media/GdA1b2C3.jpg', type: 'photo' }],
};

const REDDIT_POST: RedditItemDto = {
  uri: 'https://www.reddit.com/r/Bitcoin/comments/x1y2z3/halving_day/',
  datetime: '2026-11-20T14:03:51.000Z',
  source: 'REDDIT',
  label: 'r/bitcoin',
  content: 'Halving day\n\nWhat are you all expecting this time?',
  id: 't3_x1y2z3',
  url: 'https://www.reddit.com/r/Bitcoin/comments/x1y2z3/halving_day/',
  username: 'hodl_forever',
  communityName: 'r/Bitcoin',
  body: 'What are you all expecting this time?',
  title: 'Halving day',
  createdAt: '2026-11-20T14:03:51.000Z',
  dataType: 'post',
  parentId: null,
};

const REDDIT_COMMENT: RedditItemDto = {
  uri: 'https://www.reddit.com/r/Bitcoin/comments/x1y2z3/comment/k9l8m7/',
  datetime: '2026-11-20T15:10:02.000Z',
  source: 'REDDIT',
  label: 'r/bitcoin',
  content: 'Same as last time: nothing, then everything.',
  id: 't1_k9l8m7',
  url: 'https://www.reddit.com/r/Bitcoin/comments/x1y2z3/comment/k9l8m7/',
  username: 'stack_sats',
  communityName: 'r/Bitcoin',
  body: 'Same as last time: nothing, then everything.',
  title: null,
  createdAt: '2026-11-20T15:10:02.000Z',
  dataType: 'comment',
  parentId: 't3_x1y2z3',
};

function meta(source: SourceName, items: number): OnDemandMetaDto {
  return {
    source,
    miners_queried: 5,
    miners_responded: 4,
    miners_failed: { count: 1, reasons: { timeout: 1 } },
    items_returned: items,
    items_dropped_invalid: 0,
    consensus: 1,
    hedged_requests: 0,
    deadline_reached: false,
    processing_time_ms: 212,
    cache_hit: false,
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
  noMiner: {
    summary: 'No miner could be asked (still HTTP 200)',
    value: {
      status: 'error',
      data: [],
      meta: {
        ...meta('X', 0),
        error: 'No miners available',
        miners_queried: 0,
        miners_responded: 0,
        miners_failed: { count: 0, reasons: {} },
        consensus: 0,
        processing_time_ms: 1,
      },
    },
  },
};
