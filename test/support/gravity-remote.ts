import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';

/**
 * A stand-in for the subnet's Gravity repository: a bare git repository in a temporary
 * directory, reached as `file://`, and a working copy that commits to it as "some validator".
 * Nothing here leaves the machine.
 */
export interface GravityRemote {
  /** The `file://` URL of the bare repository (GRAVITY_REPO_URL). */
  url: string;
  /** Writes these files (path → text) on `branch`, commits and pushes; returns the commit SHA. */
  commit(files: Record<string, string>, message?: string): string;
  /** The SHA the remote's branch points at. */
  head(): string;
  remove(): void;
}

export function createGravityRemote(branch = 'main'): GravityRemote {
  const root = mkdtempSync(join(tmpdir(), 'gravity-'));
  const bare = join(root, 'gravity.git');
  const work = join(root, 'work');
  const git = (cwd: string, ...args: string[]) =>
    execFileSync('git', ['-C', cwd, ...args], {
      encoding: 'utf8',
      env: { ...process.env, GIT_TERMINAL_PROMPT: '0' },
    }).trim();
  mkdirSync(bare);
  git(bare, 'init', '--quiet', '--bare', `--initial-branch=${branch}`);
  mkdirSync(work);
  git(work, 'init', '--quiet', `--initial-branch=${branch}`);
  git(work, 'config', 'user.name', 'Some Validator');
  git(work, 'config', 'user.email', 'validator@example.invalid');
  git(work, 'remote', 'add', 'origin', bare);
  return {
    url: `file://${bare}`,
    commit(files, message = 'Update validator preferences') {
      for (const [path, text] of Object.entries(files)) {
        mkdirSync(dirname(join(work, path)), { recursive: true });
        writeFileSync(join(work, path), text);
        git(work, 'add', path);
      }
      git(work, 'commit', '--quiet', '--allow-empty', '-m', message);
      git(work, 'push', '--quiet', 'origin', branch);
      return git(work, 'rev-parse', 'HEAD');
    },
    head: () => git(bare, 'rev-parse', branch),
    remove: () => rmSync(root, { recursive: true, force: true }),
  };
}
