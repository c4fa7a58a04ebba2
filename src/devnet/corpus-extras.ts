import { RedditItem, XItem, XTweet, XUser } from '../network/protocol';
import { randomBase62 } from './corpus-text';
import { Rng } from './rng';
import { roundTo } from '../common/round-to';

/**
 * The record fields newer scrapers add (view and bookmark counts, language, reply and quote
 * targets, profile details; Reddit scores and media), drawn from their own random stream. About
 * a quarter of the records come from scrapers without them, as on the real network: the
 * gateway answers those fields with null.
 */

const WITHOUT_NEWER_FIELDS = 0.25;

const DESCRIPTIONS = [
  'Building on-chain things. Opinions are my own.',
  'Markets, models and long walks. Not financial advice.',
  'Engineer by day, degen by night.',
  'Data nerd | open source | coffee',
  'Writing about AI, crypto and the space between.',
];

const LOCATIONS = ['Berlin', 'Lisbon', 'New York, NY', 'Singapore', 'Toronto', 'the metaverse'];

type ProfileExtras = Pick<
  XUser,
  | 'user_blue_verified'
  | 'user_description'
  | 'user_location'
  | 'profile_image_url'
  | 'cover_picture_url'
>;

export function profileExtras(extras: Rng, userId: string, followers: number): ProfileExtras {
  return {
    user_blue_verified: extras.chance(followers > 10_000 ? 0.5 : 0.12),
    user_description: extras.chance(0.75) ? extras.pick(DESCRIPTIONS) : null,
    user_location: extras.chance(0.5) ? extras.pick(LOCATIONS) : null,
    profile_image_url: extras.chance(0.95)
      ? `https://pbs.twimg.com/profile_images/${userId}/${randomBase62(extras, 8)}_normal.jpg`
      : null,
    cover_picture_url: extras.chance(0.5)
      ? `https://pbs.twimg.com/profile_banners/${userId}/${1_700_000_000 + extras.int(0, 90_000_000)}`
      : null,
  };
}

type PostExtras = Pick<
  XTweet,
  | 'view_count'
  | 'bookmark_count'
  | 'language'
  | 'in_reply_to_user_id'
  | 'in_reply_to_username'
  | 'quoted_tweet_id'
>;

/** The newer tweet fields of a post, or undefined when its scraper did not record them. */
export function xPostExtras(
  extras: Rng,
  post: XItem,
  repliedTo: XItem | undefined,
  earlier: readonly XItem[],
): PostExtras | undefined {
  if (extras.chance(WITHOUT_NEWER_FIELDS)) return undefined;
  const likes = post.tweet.like_count ?? 0;
  const language = extras.next();
  return {
    view_count: likes * extras.int(15, 120) + extras.int(0, 50),
    bookmark_count: Math.floor(likes * extras.next() * 0.2),
    // Posts of hashtags and mentions alone are tagged undetermined.
    language: language < 0.93 ? 'en' : 'und',
    in_reply_to_user_id: repliedTo?.user.id ?? null,
    in_reply_to_username: repliedTo?.user.username ?? null,
    quoted_tweet_id:
      post.tweet.is_quote && earlier.length > 0 ? extras.pick(earlier).tweet.id : null,
  };
}

/** A post as a scraper without the newer fields records it: its author's details too. */
export function withoutNewerFields(post: XItem): XItem {
  return {
    ...post,
    user: {
      ...post.user,
      user_blue_verified: null,
      user_description: null,
      user_location: null,
      profile_image_url: null,
      cover_picture_url: null,
    },
  };
}

type RedditExtras = Pick<
  RedditItem,
  'media' | 'is_nsfw' | 'score' | 'upvote_ratio' | 'num_comments'
>;

/**
 * Scores and media of a Reddit post or comment (comments have no ratio or comment count), or
 * nulls when its scraper did not record them. Link posts (no body) often carry an image.
 */
export function redditExtras(
  extras: Rng,
  dataType: 'post' | 'comment',
  body: string,
): RedditExtras {
  if (extras.chance(WITHOUT_NEWER_FIELDS))
    return { media: null, is_nsfw: null, score: null, upvote_ratio: null, num_comments: null };
  if (dataType === 'comment')
    return {
      media: null,
      is_nsfw: false,
      score: Math.floor(Math.exp(extras.next() * 5)) - 2,
      upvote_ratio: null,
      num_comments: null,
    };
  const image = body === '' && extras.chance(0.6);
  return {
    media: image ? [`https://i.redd.it/${randomBase62(extras, 13).toLowerCase()}.jpeg`] : null,
    is_nsfw: extras.chance(0.02),
    score: Math.floor(Math.exp(extras.next() * 8)),
    // Two decimals, below 1: Python would write 1 as `1.0`, which JSON.stringify cannot.
    upvote_ratio: roundTo(0.55 + 0.44 * extras.next(), 2),
    num_comments: Math.floor(Math.exp(extras.next() * 5.5)) - 1,
  };
}
