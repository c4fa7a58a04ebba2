import { parseIsoDate } from './iso-date';
import { DataSource } from './protocol';

/**
 * Structural checks of items returned by miners, which are untrusted: a check never throws.
 * What the public API promises of every item (uri, datetime, source, label, content) plus the
 * fields of each source's documented shape (ORIGINAL-SYSTEM.md).
 */
export function isValidItem(item: unknown, source: DataSource): boolean {
  if (!isRecord(item)) return false;
  const common =
    isNonEmptyString(item.uri) &&
    typeof item.datetime === 'string' &&
    parseIsoDate(item.datetime) !== undefined &&
    item.source === source &&
    (item.label === null || typeof item.label === 'string') &&
    typeof item.content === 'string';
  if (!common) return false;
  return source === 'X' ? isXShape(item) : isRedditShape(item);
}

function isXShape(item: Record<string, unknown>): boolean {
  const { user, tweet, media } = item;
  return (
    isRecord(user) &&
    isNonEmptyString(user.username) &&
    isRecord(tweet) &&
    typeof tweet.id === 'string' &&
    Array.isArray(tweet.hashtags) &&
    tweet.hashtags.every((tag) => typeof tag === 'string') &&
    (media === undefined ||
      (Array.isArray(media) &&
        media.every((entry) => isRecord(entry) && typeof entry.url === 'string')))
  );
}

function isRedditShape(item: Record<string, unknown>): boolean {
  return (
    isNonEmptyString(item.id) &&
    typeof item.url === 'string' &&
    isNonEmptyString(item.username) &&
    typeof item.communityName === 'string' &&
    /^r\//i.test(item.communityName) &&
    typeof item.body === 'string' &&
    (item.dataType === 'post' || item.dataType === 'comment')
  );
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function isNonEmptyString(value: unknown): value is string {
  return typeof value === 'string' && value.length > 0;
}
