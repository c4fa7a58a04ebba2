import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';

/**
 * A stand-in for the subnet's Gravity repository: a bare git repository in a temporary
 * directory, reached as `file://`, into which "other validators" push through a clone of their
 * own, as they would on GitHub. Nothing here leaves the machine.
 */
export interface GravityRemote {
  /** The `file://` URL of the bare repository (GRAVITY_REPO_URL). */
  url: string;
  /**
   * Someone else writes these files (path → text) on the branch, on top of whatever was pushed
   * meanwhile (our gateway's commits included), commits and pushes; returns the commit SHA.
   */
  commit(files: Record<string, string | Buffer>, message?: string): string;
  /** Another validator pushes its preferences file; returns the new head. */
  pushAs(hotkey: string, content: string | Buffer): string;
  /**
   * As pushAs, on another branch started from the main branch's head (which does not move);
   * returns that branch's new head.
   */
  pushAsOnBranch(other: string, hotkey: string, content: string): string;
  /**
   * The branch's history rewritten (a force push): it points at `sha` again, the commits after
   * it unreachable and pruned, as a fresh clone would no longer find them.
   */
  rewind(sha: string): void;
  /** The SHA the remote's branch points at. */
  head(): string;
  /** Parents of a commit. */
  parents(sha: string): string[];
  /** A commit's message. */
  message(sha: string): string;
  /** The preferences file of `hotkey` at `sha`, or undefined when the commit has none. */
  fileAt(sha: string, hotkey: string): string | undefined;
  /** Commits on the branch (newest first) that changed the preferences file of `hotkey`. */
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
  GIT_TERMINAL_PROMPT: '0',
};

const fileOf = (hotkey: string) => `validator_preferences/${hotkey}.json`;

export function createGravityRemote(branch = 'main'): GravityRemote {
  const root = mkdtempSync(join(tmpdir(), 'gravity-remote-'));
  const bare = join(root, 'gravity.git');
  const work = join(root, 'someone-else');
  const git = (dir: string, ...args: string[]) =>
    execFileSync('git', ['-C', dir, ...args], {
      env: { ...process.env, ...IDENTITY },
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'pipe'],
    }).trim();
  mkdirSync(bare);
  git(bare, 'init', '--quiet', '--bare', `--initial-branch=${branch}`);
  mkdirSync(work);
  git(work, 'init', '--quiet', `--initial-branch=${branch}`);
  writeFileSync(join(work, 'README.md'), 'Gravity: validators’ preferences\n');
  git(work, 'add', 'README.md');
  git(work, 'commit', '--quiet', '-m', 'Initial commit');
  git(work, 'push', '--quiet', bare, `${branch}:${branch}`);

  const remote: GravityRemote = {
    url: `file://${bare}`,
    commit(files, message = 'Update validator preferences') {
      git(work, 'pull', '--quiet', '--ff-only', bare, branch);
      for (const [path, text] of Object.entries(files)) {
        mkdirSync(dirname(join(work, path)), { recursive: true });
        writeFileSync(join(work, path), text);
        git(work, 'add', path);
      }
      git(work, 'commit', '--quiet', '--allow-empty', '-m', message);
      git(work, 'push', '--quiet', bare, `${branch}:${branch}`);
      return git(bare, 'rev-parse', branch);
    },
    pushAs: (hotkey, content) =>
      remote.commit({ [fileOf(hotkey)]: content }, `Add ${hotkey} preferences JSON file`),
    pushAsOnBranch(other, hotkey, content) {
      git(work, 'pull', '--quiet', '--ff-only', bare, branch);
      git(work, 'checkout', '--quiet', '-B', other);
      mkdirSync(dirname(join(work, fileOf(hotkey))), { recursive: true });
      writeFileSync(join(work, fileOf(hotkey)), content);
      git(work, 'add', fileOf(hotkey));
      git(work, 'commit', '--quiet', '-m', `Add ${hotkey} preferences JSON file`);
      git(work, 'push', '--quiet', bare, `${other}:${other}`);
      git(work, 'checkout', '--quiet', branch);
      return git(bare, 'rev-parse', other);
    },
    rewind(sha) {
      git(bare, 'update-ref', `refs/heads/${branch}`, sha);
      git(bare, 'reflog', 'expire', '--expire=now', '--all');
      git(bare, 'gc', '--quiet', '--prune=now');
      git(work, 'fetch', '--quiet', bare, branch);
      git(work, 'reset', '--quiet', '--hard', 'FETCH_HEAD');
    },
    head: () => git(bare, 'rev-parse', branch),
    parents: (sha) => git(bare, 'rev-list', '--parents', '-n', '1', sha).split(' ').slice(1),
    message: (sha) => git(bare, 'log', '-1', '--format=%B', sha),
    fileAt(sha, hotkey) {
      try {
        return git(bare, 'show', `${sha}:${fileOf(hotkey)}`);
      } catch {
        return undefined;
      }
    },
    commitsOf: (hotkey) =>
      git(bare, 'log', '--format=%H', branch, '--', fileOf(hotkey)).split('\n').filter(Boolean),
    remove: () => rmSync(root, { recursive: true, force: true }),
  };
  return remote;
}
