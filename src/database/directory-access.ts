import { statSync } from 'node:fs';
import { dirname, resolve } from 'node:path';

/** A system user as the kernel checks its access: its uid, and its primary and other groups. */
export interface SystemUser {
  uid: number;
  gids: number[];
}

/** Search (execute) permission, in the owner's, the group's and the others' bits. */
const SEARCH = { owner: 0o100, group: 0o010, other: 0o001 } as const;

/**
 * The first directory on the way to `path` (its ancestors, from the root down; not `path`
 * itself) that `user` may not enter, or undefined when it may enter them all. Read from each
 * directory's mode and owner as the kernel applies them (the owner's bits for the owner, else the
 * group's for a member, else the others'); `fs.access` answers only for this process, which is
 * root. ACLs are not read: a directory opened to the user by one alone is reported closed.
 */
export function firstClosedDirectory(path: string, user: SystemUser): string | undefined {
  const ancestors: string[] = [];
  for (let directory = dirname(resolve(path)); ; directory = dirname(directory)) {
    ancestors.unshift(directory);
    if (dirname(directory) === directory) break;
  }
  return ancestors.find((directory) => !canEnter(directory, user));
}

function canEnter(directory: string, user: SystemUser): boolean {
  const stats = statSync(directory);
  if (stats.uid === user.uid) return (stats.mode & SEARCH.owner) !== 0;
  if (user.gids.includes(stats.gid)) return (stats.mode & SEARCH.group) !== 0;
  return (stats.mode & SEARCH.other) !== 0;
}
