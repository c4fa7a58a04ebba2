import { DataItem, RedditItem, XItem } from './protocol';

/**
 * An item with its keys in the declared order (protocol.ts), the order records.ts builds live
 * items in and ORIGINAL-SYSTEM.md lists (the hosted code's models declare another:
 * docs/decisions.md, "Items in the hosted API's shape"). An item read back from a jsonb column comes in
 * Postgres' order (shorter keys first: `uri, text, user, label, media, tweet, …`), so the same
 * post's keys, and with them a client's CSV or `json_normalize` columns, changed with where its
 * answer came from (docs/decisions.md, "Items in the hosted API's shape"). One object literal a
 * shape: V8 builds it with one hidden class, about a microsecond an item.
 */
export function inItemOrder(item: DataItem): DataItem {
  return item.source === 'X' ? xInOrder(item) : redditInOrder(item);
}

function xInOrder(item: XItem): XItem {
  const { tweet, user } = item;
  return {
    text: item.text,
    datetime: item.datetime,
    uri: item.uri,
    source: item.source,
    label: item.label,
    content_size_bytes: item.content_size_bytes,
    tweet: {
      id: tweet.id,
      like_count: tweet.like_count,
      retweet_count: tweet.retweet_count,
      reply_count: tweet.reply_count,
      quote_count: tweet.quote_count,
      view_count: tweet.view_count,
      bookmark_count: tweet.bookmark_count,
      language: tweet.language,
      hashtags: tweet.hashtags,
      is_retweet: tweet.is_retweet,
      is_reply: tweet.is_reply,
      is_quote: tweet.is_quote,
      conversation_id: tweet.conversation_id,
      in_reply_to_user_id: tweet.in_reply_to_user_id,
      in_reply_to_username: tweet.in_reply_to_username,
      quoted_tweet_id: tweet.quoted_tweet_id,
    },
    user: {
      id: user.id,
      username: user.username,
      display_name: user.display_name,
      verified: user.verified,
      user_blue_verified: user.user_blue_verified,
      followers_count: user.followers_count,
      following_count: user.following_count,
      user_description: user.user_description,
      user_location: user.user_location,
      profile_image_url: user.profile_image_url,
      cover_picture_url: user.cover_picture_url,
    },
    media: item.media,
    content: item.content,
  };
}

function redditInOrder(item: RedditItem): RedditItem {
  return {
    uri: item.uri,
    datetime: item.datetime,
    source: item.source,
    label: item.label,
    content_size_bytes: item.content_size_bytes,
    id: item.id,
    url: item.url,
    username: item.username,
    communityName: item.communityName,
    body: item.body,
    createdAt: item.createdAt,
    dataType: item.dataType,
    title: item.title,
    parentId: item.parentId,
    media: item.media,
    is_nsfw: item.is_nsfw,
    score: item.score,
    upvote_ratio: item.upvote_ratio,
    num_comments: item.num_comments,
    content: item.content,
  };
}
