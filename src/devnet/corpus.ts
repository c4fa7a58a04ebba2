import { DataItem, XUser } from '../network/protocol';
import { generateRedditItems } from './corpus-reddit';
import { generateProfile, generateXPosts } from './corpus-x';
import { withRecordSize } from './miner-records';
import { createRng, deriveSeed, hashUnit, Rng, WeightedPicker } from './rng';
import { NAME_FIRST_PARTS, NAME_SECOND_PARTS } from './vocabulary';
import { HOUR_MS } from '../common/clock/durations';

/**
 * The synthetic corpus the devnet miners hold: deterministic from (seed, now), so tests can
 * rebuild it and compute expected answers by brute force.
 */

export interface CorpusSize {
  x: number;
  reddit: number;
}

export const DEFAULT_CORPUS_SIZE: Readonly<CorpusSize> = { x: 3000, reddit: 2000 };

export const DEFAULT_AUTHOR_COUNT = 200;

export interface CorpusOptions {
  seed: number;
  /**
   * Items are spread over the 30 days before it. Defaults to the current time floored to the hour.
   */
  now?: Date;
  size?: CorpusSize;
}

export interface Corpus {
  readonly seed: number;
  readonly now: Date;
  /** X posts first, then Reddit posts, then Reddit comments; uris are unique. */
  readonly items: readonly DataItem[];
}

export function floorToHour(date: Date): Date {
  return new Date(Math.floor(date.getTime() / HOUR_MS) * HOUR_MS);
}

export function generateCorpus(options: CorpusOptions): Corpus {
  const now = options.now ?? floorToHour(new Date());
  const size = options.size ?? DEFAULT_CORPUS_SIZE;
  const seed = options.seed;
  // Separate streams, so that changing the Reddit size does not change the X posts.
  // The fields newer scrapers record have streams of their own (corpus-extras.ts).
  const profiles = generateProfiles(
    createRng(deriveSeed(seed, 'authors')),
    DEFAULT_AUTHOR_COUNT,
    createRng(deriveSeed(seed, 'authors', 'extras')),
  );
  const authorPicker = WeightedPicker.zipf(profiles, 0.8);
  const usernamePicker = WeightedPicker.zipf(
    profiles.map((profile) => profile.username),
    0.8,
  );
  const xPosts = generateXPosts(
    createRng(deriveSeed(seed, 'x')),
    now,
    size.x,
    authorPicker,
    createRng(deriveSeed(seed, 'x', 'extras')),
  );
  const redditItems = generateRedditItems(
    createRng(deriveSeed(seed, 'reddit')),
    now,
    size.reddit,
    usernamePicker,
    createRng(deriveSeed(seed, 'reddit', 'extras')),
  );
  return { seed, now, items: [...xPosts, ...redditItems].map(withRecordSize) };
}

function generateProfiles(rng: Rng, count: number, extras: Rng): XUser[] {
  const usernames = new Set<string>();
  while (usernames.size < count) {
    const separator = rng.chance(0.5) ? '_' : '';
    const digits = rng.chance(0.4) ? String(rng.int(1, 999)) : '';
    usernames.add(
      `${rng.pick(NAME_FIRST_PARTS)}${separator}${rng.pick(NAME_SECOND_PARTS)}${digits}`,
    );
  }
  return [...usernames].map((username, index) => generateProfile(rng, username, index, extras));
}

/**
 * Which items each miner holds, as indexes into `corpus.items` in ascending order. Each item is
 * held by 40-60% of the miners (its share is drawn per item); an item nobody drew goes to one
 * miner, so the network as a whole holds everything. Decisions are hashed per (item, miner), so
 * a miner's holdings do not change when miners are added, apart from those orphan items.
 */
export function assignHoldings(corpus: Corpus, minerCount: number): number[][] {
  const holdings: number[][] = Array.from({ length: minerCount }, () => []);
  if (minerCount === 0) return holdings;
  corpus.items.forEach((_, itemIndex) => {
    const share = 0.4 + 0.2 * hashUnit(corpus.seed, 'share', itemIndex);
    let held = false;
    for (let miner = 0; miner < minerCount; miner++) {
      if (hashUnit(corpus.seed, 'hold', itemIndex, miner) < share) {
        holdings[miner].push(itemIndex);
        held = true;
      }
    }
    if (!held) {
      const owner = Math.floor(hashUnit(corpus.seed, 'owner', itemIndex) * minerCount);
      holdings[owner].push(itemIndex);
    }
  });
  return holdings;
}
