import { XItem } from './protocol';

/**
 * An X item as the fields of the subnet's `XContent` (the other way from sn13/records.ts'
 * xItemOf), in the model's order, with `timestamp` as the caller writes it (miners store the
 * post's time rounded down to the minute). Shared by the devnet's miners (which serialize it) and
 * the Parquet datasets (whose X columns are these fields): public (docs/decisions.md, "The
 * network's public surface").
 */
export function xContentFields<T>(item: XItem, timestamp: T) {
  const { user, tweet } = item;
  return {
    username: user.username,
    text: item.text,
    url: item.uri,
    timestamp,
    tweet_hashtags: tweet.hashtags,
    media: item.media,
    user_id: user.id,
    user_display_name: user.display_name,
    user_verified: user.verified,
    tweet_id: tweet.id,
    is_reply: tweet.is_reply,
    is_quote: tweet.is_quote,
    conversation_id: tweet.conversation_id,
    in_reply_to_user_id: tweet.in_reply_to_user_id,
    language: tweet.language,
    in_reply_to_username: tweet.in_reply_to_username,
    quoted_tweet_id: tweet.quoted_tweet_id,
    like_count: tweet.like_count,
    retweet_count: tweet.retweet_count,
    reply_count: tweet.reply_count,
    quote_count: tweet.quote_count,
    view_count: tweet.view_count,
    bookmark_count: tweet.bookmark_count,
    user_blue_verified: user.user_blue_verified,
    user_description: user.user_description,
    user_location: user.user_location,
    profile_image_url: user.profile_image_url,
    cover_picture_url: user.cover_picture_url,
    user_followers_count: user.followers_count,
    user_following_count: user.following_count,
    // Not an XContent field; scrapers add it and validators drop it before parsing.
    is_retweet: tweet.is_retweet,
  };
}
