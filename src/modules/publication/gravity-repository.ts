import { mkdir } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { GravityConfig } from '../../config/app-config';
import { GitError, runGit } from './git-command';

/** Where the subnet keeps each validator's vote in the Gravity repository. */
export const PREFERENCES_FOLDER = 'validator_preferences';
/** One git command (a fetch or push of a small repository); a stuck remote is given up. */
const GIT_TIMEOUT_MS = 120_000;
/** Pushes refused because the remote moved, redone on top of it, before the attempt fails. */
const PUSH_ATTEMPTS = 5;
/** The remote-tracking ref the branch is fetched into (no remote is configured: see below). */
const TRACKING_REF = 'refs/remotes/gravity/head';

export interface PushResult {
  /** The commit whose tree holds the vote: ours, or the remote's head when it held it already. */
  sha: string;
  /** False when the remote already had exactly this file: nothing was committed. */
  pushed: boolean;
}

/** The remote refused the push because its branch moved since our fetch. */
class PushRejectedError extends GitError {}

/**
 * The Gravity repository as this gateway writes to it: a bare clone under the data directory,
 * private to this service, in which a vote becomes one commit on top of the remote branch.
 * Commits are built with git's plumbing (blob, tree, commit) from the fetched branch, never in
 * a checkout: there is no working tree to leave dirty, and this process's working directory is
 * never changed. The remote URL is passed to each fetch and push rather than stored in the
 * clone's configuration; a token travels as an HTTP header in the command's environment, never
 * in a URL, an argument or a file.
 */
export class GravityRepository {
  private readonly dir: string;
  private readonly secrets: string[];
  private readonly credentials: Record<string, string>;

  /**
   * Runs between our fetch and our push (tests: another validator pushing just then). Never set
   * in production.
   */
  beforePush: (() => Promise<void>) | undefined;

  constructor(
    private readonly config: GravityConfig,
    dataDir: string,
  ) {
    this.dir = resolve(dataDir, 'gravity');
    const token = config.repoUrl.startsWith('https://') ? config.token : undefined;
    const header = token
      ? `Authorization: Basic ${Buffer.from(`x-access-token:${token}`).toString('base64')}`
      : undefined;
    this.secrets = [token, header, header?.slice('Authorization: Basic '.length)].filter(
      (secret): secret is string => secret !== undefined,
    );
    // GIT_CONFIG_*: configuration for one command, from the environment (not visible in `ps`).
    this.credentials = header
      ? { GIT_CONFIG_COUNT: '1', GIT_CONFIG_KEY_0: 'http.extraHeader', GIT_CONFIG_VALUE_0: header }
      : {};
  }

  /**
   * Makes `content` the file of `hotkey` on the branch: fetches the branch, commits the file on
   * top of it unless it holds exactly that already, and pushes. A push refused because someone
   * pushed meanwhile is redone on top of the new head, up to PUSH_ATTEMPTS times.
   */
  async publish(hotkey: string, content: string): Promise<PushResult> {
    await this.ensureClone();
    const path = `${PREFERENCES_FOLDER}/${hotkey}.json`;
    for (let attempt = 1; ; attempt += 1) {
      const head = await this.fetchBranch();
      const blob = await this.git(['hash-object', '-w', '--stdin'], { input: content });
      if (head && (await this.blobAt(head, path)) === blob) return { sha: head, pushed: false };
      const commit = await this.commitOnto(
        head,
        path,
        blob,
        `Update ${hotkey} preferences JSON file`,
      );
      await this.beforePush?.();
      try {
        await this.push(commit);
        return { sha: commit, pushed: true };
      } catch (error) {
        if (!(error instanceof PushRejectedError) || attempt >= PUSH_ATTEMPTS) throw error;
      }
    }
  }

  /** The file of `hotkey` at `sha` in our clone (tests and diagnostics). */
  async fileAt(sha: string, hotkey: string): Promise<string> {
    return this.git(['cat-file', 'blob', `${sha}:${PREFERENCES_FOLDER}/${hotkey}.json`]);
  }

  private async ensureClone(): Promise<void> {
    if (existsSync(join(this.dir, 'HEAD'))) return;
    await mkdir(this.dir, { recursive: true });
    await this.git(['init', '--quiet', '--bare']);
  }

  /** The remote branch's head, or null when the branch does not exist yet (a new repository). */
  private async fetchBranch(): Promise<string | null> {
    try {
      await this.git(
        [
          'fetch',
          '--quiet',
          '--no-tags',
          '--depth=1',
          this.config.repoUrl,
          `+refs/heads/${this.config.branch}:${TRACKING_REF}`,
        ],
        { env: this.credentials },
      );
    } catch (error) {
      if (error instanceof GitError && /couldn't find remote ref/i.test(error.output)) return null;
      throw error;
    }
    return this.git(['rev-parse', '--verify', `${TRACKING_REF}^{commit}`]);
  }

  private async blobAt(commit: string, path: string): Promise<string | null> {
    try {
      return await this.git(['rev-parse', '--verify', '--quiet', `${commit}:${path}`]);
    } catch {
      return null;
    }
  }

  /** A commit of `head`'s tree with `path` set to `blob` (an index file of our own, no checkout). */
  private async commitOnto(
    head: string | null,
    path: string,
    blob: string,
    message: string,
  ): Promise<string> {
    const env = { GIT_INDEX_FILE: join(this.dir, 'publish-index') };
    await this.git(head ? ['read-tree', head] : ['read-tree', '--empty'], { env });
    await this.git(['update-index', '--add', '--cacheinfo', `100644,${blob},${path}`], { env });
    const tree = await this.git(['write-tree'], { env });
    return this.git(['commit-tree', tree, ...(head ? ['-p', head] : []), '-m', message], {
      env: AUTHOR,
    });
  }

  private async push(commit: string): Promise<void> {
    try {
      await this.git(
        ['push', '--porcelain', this.config.repoUrl, `${commit}:refs/heads/${this.config.branch}`],
        { env: this.credentials },
      );
    } catch (error) {
      if (
        error instanceof GitError &&
        /\[(remote )?rejected\]|non-fast-forward|fetch first/i.test(error.output)
      )
        throw new PushRejectedError(
          `push refused, the branch moved: ${error.message}`,
          error.output,
        );
      throw error;
    }
  }

  private git(
    args: readonly string[],
    options: { env?: Record<string, string>; input?: string } = {},
  ): Promise<string> {
    return runGit(this.dir, args, { ...options, timeoutMs: GIT_TIMEOUT_MS, secrets: this.secrets });
  }
}

/** Who the commits are by: the service, not whoever runs it (no global git identity is read). */
const AUTHOR = {
  GIT_AUTHOR_NAME: 'validator-gateway',
  GIT_AUTHOR_EMAIL: 'validator-gateway@users.noreply.github.com',
  GIT_COMMITTER_NAME: 'validator-gateway',
  GIT_COMMITTER_EMAIL: 'validator-gateway@users.noreply.github.com',
};
