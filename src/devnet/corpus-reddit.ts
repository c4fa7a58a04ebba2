import { RedditItem } from '../network/protocol';
import { redditExtras } from './corpus-extras';
import { fillTemplate, recentDate, sentences, slugify, toMinute } from './corpus-text';
import { Rng, WeightedPicker } from './rng';
import { COMMENT_OPENERS, SUBREDDITS, TITLES } from './vocabulary';

/**
 * Synthetic Reddit posts and comments; every comment answers a post of the same subreddit. Scores
 * and media come from a separate random stream (`extras`, corpus-extras.ts).
 */

const subredditPicker = WeightedPicker.zipf(SUBREDDITS, 0.9);
// Filled in by `redditExtras` once the items are made; the record's size by corpus.ts.
const NO_EXTRAS = {
  media: null,
  is_nsfw: null,
  score: null,
  upvote_ratio: null,
  num_comments: null,
};
const POST_SHARE = 0.4;

export function generateRedditItems(
  rng: Rng,
  now: Date,
  count: number,
  usernames: WeightedPicker<string>,
  extras: Rng,
): RedditItem[] {
  const postCount = count === 0 ? 0 : Math.max(1, Math.round(count * POST_SHARE));
  const posts: RedditItem[] = [];
  for (let index = 0; index < postCount; index++) {
    posts.push(generatePost(rng, now, index, usernames.pick(rng)));
  }
  const comments: RedditItem[] = [];
  for (let index = 0; index < count - postCount; index++) {
    comments.push(generateComment(rng, now, index, rng.pick(posts), usernames.pick(rng)));
  }
  return [...posts, ...comments].map((item) => ({
    ...item,
    ...redditExtras(extras, item.dataType, item.body),
    // Kept last, as the items put it.
    content: item.content,
  }));
}

/** Base-36 ids that grow with the index (so they never collide) plus some noise. */
function redditId(rng: Rng, base: number, index: number): string {
  return (base + index * 1297 + rng.int(0, 1296)).toString(36);
}

function generatePost(rng: Rng, now: Date, index: number, username: string): RedditItem {
  const subreddit = subredditPicker.pick(rng);
  const shortId = redditId(rng, 2_000_000_000, index);
  const title = fillTemplate(rng.pick(TITLES), rng, subreddit.topic);
  // About one post in five is a link post with no body.
  const body = rng.chance(0.2) ? '' : sentences(rng, subreddit.topic, rng.int(1, 4));
  const datetime = recentDate(rng, now).toISOString();
  const uri = `https://www.reddit.com/r/${subreddit.name}/comments/${shortId}/${slugify(title)}/`;
  return {
    uri,
    datetime,
    source: 'REDDIT',
    label: `r/${subreddit.name.toLowerCase()}`,
    content_size_bytes: 0,
    id: `t3_${shortId}`,
    url: uri,
    username,
    communityName: `r/${subreddit.name}`,
    body,
    createdAt: toMinute(datetime),
    dataType: 'post',
    title,
    parentId: null,
    ...NO_EXTRAS,
    content: body === '' ? title : `${title}\n\n${body}`,
  };
}

function generateComment(
  rng: Rng,
  now: Date,
  index: number,
  post: RedditItem,
  username: string,
): RedditItem {
  const shortId = redditId(rng, 60_000_000_000, index);
  const postShortId = post.id.replace(/^t3_/, '');
  const topic = SUBREDDITS.find((entry) => `r/${entry.name}` === post.communityName)?.topic;
  const body = `${rng.pick(COMMENT_OPENERS)} ${sentences(rng, topic ?? 'news', rng.int(1, 2))}`;
  // Comments come after their post, within two days, and never after `now`.
  const postTime = Date.parse(post.datetime);
  const span = Math.min(2 * 86_400_000, now.getTime() - postTime - 1000);
  const datetime = new Date(postTime + 1000 * Math.floor((rng.next() * span) / 1000)).toISOString();
  const uri = `https://www.reddit.com/${post.communityName}/comments/${postShortId}/comment/${shortId}/`;
  return {
    uri,
    datetime,
    source: 'REDDIT',
    label: post.label,
    content_size_bytes: 0,
    id: `t1_${shortId}`,
    url: uri,
    username,
    communityName: post.communityName,
    body,
    createdAt: toMinute(datetime),
    dataType: 'comment',
    title: null,
    parentId: post.id,
    ...NO_EXTRAS,
    content: body,
  };
}
