import { XItem, XUser } from '../network/protocol';
import { xPostId } from '../network/x-post-id';
import { profileExtras, withoutNewerFields, xPostExtras } from './corpus-extras';
import { capitalize, randomBase62, recentDate, sentences } from './corpus-text';
import { Rng, WeightedPicker } from './rng';
import { HASHTAGS, TOPIC_WORDS, Topic } from './vocabulary';

/**
 * Synthetic X posts with the metadata miners scrape (user, tweet counters, media). The fields
 * newer scrapers add come from a separate random stream (`extras`, corpus-extras.ts), so that
 * adding them left the rest of the corpus as it was.
 */

const hashtagPicker = WeightedPicker.zipf(HASHTAGS, 1);
const ALL_TOPICS = Object.keys(TOPIC_WORDS) as Topic[];

export function generateXPosts(
  rng: Rng,
  now: Date,
  count: number,
  authors: WeightedPicker<XUser>,
  extras: Rng,
): XItem[] {
  const posts: XItem[] = [];
  for (let index = 0; index < count; index++) {
    posts.push(generateXPost(rng, now, index, authors, posts, extras));
  }
  return posts;
}

function generateXPost(
  rng: Rng,
  now: Date,
  index: number,
  authors: WeightedPicker<XUser>,
  earlier: readonly XItem[],
  extras: Rng,
): XItem {
  const user = authors.pick(rng);
  const datetime = recentDate(rng, now);
  const hashtags = pickHashtags(rng);
  const topic = HASHTAGS.find((entry) => entry.tag === hashtags[0]?.toLowerCase())?.topic;
  // A snowflake, as real ids are: it holds the post's time, which the gateway checks.
  const id = xPostId(datetime, index);
  const kind = rng.next();
  const isRetweet = kind < 0.1;
  const isReply = !isRetweet && kind < 0.25 && earlier.length > 0;
  const isQuote = !isRetweet && !isReply && kind < 0.3;
  const repliedTo = isReply ? rng.pick(earlier) : undefined;

  let text = sentences(rng, topic ?? rng.pick(ALL_TOPICS), rng.int(1, 2));
  if (hashtags.length > 0) text = `${text} ${hashtags.join(' ')}`;
  if (isRetweet) text = `RT @${authors.pick(rng).username}: ${text}`;
  if (repliedTo) text = `@${repliedTo.user.username} ${text}`;

  const reach = Math.sqrt((user.followers_count ?? 0) + 1);
  const likes = Math.floor(reach * rng.next() * 3);
  const post: XItem = {
    text,
    datetime: datetime.toISOString(),
    uri: `https://x.com/${user.username}/status/${id}`,
    source: 'X',
    label: hashtags.length > 0 ? hashtags[0].toLowerCase() : null,
    // The record's size, set once the whole corpus is made (corpus.ts).
    content_size_bytes: 0,
    tweet: {
      id,
      like_count: likes,
      retweet_count: Math.floor(reach * rng.next() * 0.5),
      reply_count: Math.floor(reach * rng.next() * 0.3),
      quote_count: Math.floor(reach * rng.next() * 0.1),
      view_count: null,
      bookmark_count: null,
      language: null,
      hashtags,
      is_retweet: isRetweet,
      is_reply: isReply,
      is_quote: isQuote,
      conversation_id: repliedTo ? repliedTo.tweet.conversation_id : id,
      in_reply_to_user_id: null,
      in_reply_to_username: null,
      quoted_tweet_id: null,
    },
    user: { ...user },
    media: rng.chance(0.25) ? generateMedia(rng, id) : null,
    content: text,
  };
  const extra = xPostExtras(extras, post, repliedTo, earlier);
  return extra ? { ...post, tweet: { ...post.tweet, ...extra } } : withoutNewerFields(post);
}

/**
 * 0 to 3 distinct hashtags; a few written with capitals, as people do (`#Bitcoin`, `#AI`). A
 * quarter of the posts have several, so a common tag is often not the first: miners file a post
 * under its first tag only, and a `#crypto #bitcoin` post sits in the #crypto bucket, as on the
 * real subnet (corpus.spec.ts holds the corpus to it).
 */
function pickHashtags(rng: Rng): string[] {
  const roll = rng.next();
  const count = roll < 0.15 ? 0 : roll < 0.75 ? 1 : roll < 0.93 ? 2 : 3;
  const tags = new Set<string>();
  for (let attempt = 0; tags.size < count && attempt < 20; attempt++) {
    tags.add(hashtagPicker.pick(rng).tag);
  }
  return [...tags].map((tag) => {
    const style = rng.next();
    if (style < 0.08) return `#${capitalize(tag.slice(1))}`;
    if (style < 0.11) return tag.toUpperCase();
    return tag;
  });
}

/** Photo, video and GIF URLs on X's media hosts, as records list them. */
function generateMedia(rng: Rng, tweetId: string): string[] {
  const media: string[] = [];
  const count = rng.chance(0.2) ? 2 : 1;
  for (let index = 0; index < count; index++) {
    const roll = rng.next();
    if (roll < 0.8) {
      media.push(`https://pbs.twimg.com/media/${randomBase62(rng, 15)}.jpg`);
    } else if (roll < 0.95) {
      media.push(
        `https://video.twimg.com/ext_tw_video/${tweetId}/pu/vid/720x1280/${randomBase62(rng, 16)}.mp4`,
      );
    } else {
      media.push(`https://video.twimg.com/tweet_video/${randomBase62(rng, 15)}.mp4`);
    }
  }
  return media;
}

const FIRST_NAMES = [
  'Alex',
  'Sam',
  'Jordan',
  'Taylor',
  'Chris',
  'Robin',
  'Kai',
  'Mika',
  'Noa',
  'Ari',
];

/** A stable profile per author; posts copy it, so the same author looks the same everywhere. */
export function generateProfile(rng: Rng, username: string, index: number, extras: Rng): XUser {
  const followers = Math.floor(Math.pow(10, 1 + rng.next() * 5));
  const words = username.split(/[_\d]+/).filter((word) => word !== '');
  const displayName = rng.chance(0.4)
    ? `${rng.pick(FIRST_NAMES)} | ${words.map(capitalize).join(' ')}`
    : words.map(capitalize).join(' ');
  const id = String(1_000_000_000 + index * 7_919_113 + rng.int(0, 7_919_112));
  const verified = followers > 100_000 ? rng.chance(0.6) : rng.chance(0.03);
  return {
    id,
    username,
    display_name: displayName,
    verified,
    followers_count: followers,
    following_count: rng.int(10, 3000),
    ...profileExtras(extras, id, followers),
  };
}
