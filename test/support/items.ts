import { RedditItem } from '../../src/network/protocol';

/**
 * A Reddit comment in the current item shape, as miners answer it and tasks store it; a test
 * overrides what it is about.
 */
export function redditComment(overrides: Partial<RedditItem> = {}): RedditItem {
  return {
    uri: 'https://www.reddit.com/r/Bitcoin/comments/abc/title/def/',
    datetime: '2026-11-01T09:05:00.000Z',
    source: 'REDDIT',
    label: 'r/bitcoin',
    content_size_bytes: 250,
    id: 't1_def',
    url: 'https://www.reddit.com/r/Bitcoin/comments/abc/title/def/',
    username: 'dave',
    communityName: 'r/Bitcoin',
    body: 'A reply',
    createdAt: '2026-11-01T09:05:00.000Z',
    dataType: 'comment',
    title: null,
    parentId: 't3_abc',
    media: null,
    is_nsfw: null,
    score: -2,
    upvote_ratio: null,
    num_comments: null,
    content: 'A reply',
    ...overrides,
  };
}
