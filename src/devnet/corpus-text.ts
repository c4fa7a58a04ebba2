import { Rng } from './rng';
import { SENTENCES, TOPIC_WORDS, Topic } from './vocabulary';

/** Small text helpers shared by the X and Reddit generators. */

export function fillTemplate(template: string, rng: Rng, topic: Topic): string {
  const words = TOPIC_WORDS[topic];
  const first = rng.pick(words);
  let second = rng.pick(words);
  // Two different words read better; one retry is enough for lists of a dozen words.
  if (second === first) second = rng.pick(words);
  return template.replace('{a}', first).replace('{b}', second);
}

export function sentences(rng: Rng, topic: Topic, count: number): string {
  const parts: string[] = [];
  for (let index = 0; index < count; index++) {
    parts.push(fillTemplate(rng.pick(SENTENCES), rng, topic));
  }
  return parts.join(' ');
}

const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

export function randomBase62(rng: Rng, length: number): string {
  let text = '';
  for (let index = 0; index < length; index++) text += BASE62[rng.int(0, 61)];
  return text;
}

/** Reddit-style URL slug of a title. */
export function slugify(title: string): string {
  return title
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '_')
    .replace(/^_+|_+$/g, '')
    .slice(0, 50);
}

export function capitalize(word: string): string {
  return word.charAt(0).toUpperCase() + word.slice(1);
}

/** A whole number of seconds between 1 s and 30 days before `now`, skewed towards recent. */
export function recentDate(rng: Rng, now: Date): Date {
  const windowSeconds = 30 * 86_400 - 2;
  const ageSeconds = 1 + Math.floor(Math.pow(rng.next(), 1.4) * windowSeconds);
  return new Date(now.getTime() - ageSeconds * 1000);
}

/** An ISO time rounded down to the minute, as miners keep the time in their records. */
export function toMinute(iso: string): string {
  const date = new Date(iso);
  date.setUTCSeconds(0, 0);
  return date.toISOString();
}
