import { Source } from '../../common/source';
import { authorKey, authorOfItem, DataItem, namesAuthor } from '../../network/protocol';
import { sourceOfName, toSourceName } from '../../network/sources';

/** The author an erasure takes out: a source and a username as queries compare it (authorKey). */
export interface ErasedAuthor {
  source: Source;
  /** Lower case, without `@`: how `stored_items.username` holds it. */
  username: string;
}

/** Arguments that name no author: said to the operator as they are, nothing done. */
export class ErasedAuthorError extends Error {}

/** An address rather than a name: `https://x.com/someone`, `www.reddit.com/user/someone`. */
const PROFILE_URL = /^(?:[a-z]+:\/\/|www\.|(?:[\w-]+\.)+[a-z]{2,}\/)/i;

/**
 * A Reddit username as Reddit writes it, `u/someone` or `/u/someone`, without its prefix: the
 * forms requests arrive in (a runbook audit). No username holds a `/`.
 */
function withoutRedditPrefix(source: Source, name: string): string {
  if (source !== 'reddit') return name;
  const prefixed = /^\s*\/?u\/(.*)$/i.exec(name);
  return prefixed ? prefixed[1] : name;
}

/**
 * The author `source` and `name` name: the source in any case (`X`, `reddit`), the name with
 * its `@` and the blanks around it ignored, in any case; a Reddit name's `u/` or `/u/` too. A
 * name no account of the source could have (`@@x`, `a b`, one of Reddit's `-` on X) is
 * refused: it would match nothing, and an operator who mistyped it would read that the
 * author's posts were gone.
 */
export function erasedAuthor(source: string | undefined, name: string | undefined): ErasedAuthor {
  const read = source === undefined ? undefined : sourceOfName(source);
  if (read === undefined) throw new ErasedAuthorError('--source must be X or Reddit');
  if (name === undefined || name.trim() === '')
    throw new ErasedAuthorError('--username must name the author');
  // A profile's address is not taken apart: refused, with the form to give instead.
  if (PROFILE_URL.test(name.trim()))
    throw new ErasedAuthorError(
      read === 'x'
        ? '--username is a profile URL: give the handle alone (someone or @someone)'
        : '--username is a profile URL: give the username alone (someone or u/someone)',
    );
  name = withoutRedditPrefix(read, name);
  if (!namesAuthor(name, read))
    throw new ErasedAuthorError(
      read === 'x'
        ? '--username is not an X handle: letters, digits and _ only, after one @'
        : '--username is not a Reddit username: letters, digits, _ and - only, after one @',
    );
  return { source: read, username: authorKey(name) };
}

/**
 * Whether an item (a dataset's row, a task's collected item) is the author's, by the one rule
 * the service reads authors by (authorKey: what the matcher and the item store's `username`
 * column use): X's `user.username`, Reddit's `username`. A second rule, SQL's
 * `lower(ltrim(btrim(name), '@'))`, kept `"\tErin"` (erin to the service) in a dataset whose
 * stored copy it removed (a review). Items of every shape a release wrote keep the name there
 * (legacy-items.ts).
 */
export function isAuthorOf(author: ErasedAuthor): (item: unknown) => boolean {
  const source = toSourceName(author.source);
  return (item) =>
    (item as { source?: unknown } | null)?.source === source &&
    authorOfItem(item as DataItem) === author.username;
}

/** Whether a record's author name (X's `user.username`, Reddit's `username`) is the author's. */
export function isAuthorName(author: ErasedAuthor, name: string): boolean {
  return authorKey(name) === author.username;
}
