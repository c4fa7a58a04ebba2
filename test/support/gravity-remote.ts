import { execFileSync } from 'node:child_process';
import { mkdtempSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';

/**
 * A stand-in for the Gravity repository: a bare git repository in a temporary directory,
 * reached over file://, into which "other validators" push their files through a clone of
 * their own, as they would on GitHub.
 */
export interface GravityRemote {
  /** `file:///…/gravity.git` */
  url: string;
  /** Another validator pushes its file (a commit on `main`); answers the new head. */
  pushAs(hotkey: string, content: string): string;
  head(): string;
  /** Parents of a commit. */
  parents(sha: string): string[];
  /** The file of `hotkey` at `sha`, or undefined when the commit has none. */
  fileAt(sha: string, hotkey: string): string | undefined;
  /** Commits on `main` (newest first) that changed the file of `hotkey`. */
  commitsOf(hotkey: string): string[];
  remove(): void;
}

const IDENTITY = {
  GIT_AUTHOR_NAME: 'another validator',
  GIT_AUTHOR_EMAIL: 'validator@example.invalid',
  GIT_COMMITTER_NAME: 'another validator',
  GIT_COMMITTER_EMAIL: 'validator@example.invalid',
  GIT_CONFIG_GLOBAL: '/dev/null',
  GIT_CONFIG_NOSYSTEM: '1',
};

export function createGravityRemote(): GravityRemote {
  const root = mkdtempSync(join(tmpdir(), 'gravity-remote-'));
  const bare = join(root, 'gravity.git');
  const clone = join(root, 'someone-else');
  const git = (dir: string, ...args: string[]) =>
    execFileSync('git', ['-C', dir, ...args], {
      env: { ...process.env, ...IDENTITY },
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'pipe'],
    }).trim();
  mkdirSync(bare);
  git(bare, 'init', '--quiet', '--bare', '--initial-branch=main');
  mkdirSync(clone);
  git(clone, 'init', '--quiet', '--initial-branch=main');
  writeFileSync(join(clone, 'README.md'), 'Gravity: validators’ preferences\n');
  git(clone, 'add', 'README.md');
  git(clone, 'commit', '--quiet', '-m', 'Initial commit');
  git(clone, 'push', '--quiet', bare, 'main:main');

  const fileOf = (hotkey: string) => `validator_preferences/${hotkey}.json`;
  return {
    url: `file://${bare}`,
    pushAs(hotkey, content) {
      git(clone, 'pull', '--quiet', '--ff-only', bare, 'main');
      const path = join(clone, fileOf(hotkey));
      mkdirSync(dirname(path), { recursive: true });
      writeFileSync(path, content);
      git(clone, 'add', fileOf(hotkey));
      git(clone, 'commit', '--quiet', '-m', `Add ${hotkey} preferences JSON file`);
      git(clone, 'push', '--quiet', bare, 'main:main');
      return git(bare, 'rev-parse', 'main');
    },
    head: () => git(bare, 'rev-parse', 'main'),
    parents: (sha) => git(bare, 'rev-list', '--parents', '-n', '1', sha).split(' ').slice(1),
    fileAt(sha, hotkey) {
      try {
        return git(bare, 'show', `${sha}:${fileOf(hotkey)}`);
      } catch {
        return undefined;
      }
    },
    commitsOf: (hotkey) =>
      git(bare, 'log', '--format=%H', 'main', '--', fileOf(hotkey)).split('\n').filter(Boolean),
    remove: () => rmSync(root, { recursive: true, force: true }),
  };
}
