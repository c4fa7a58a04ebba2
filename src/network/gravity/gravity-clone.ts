import { createHash } from 'node:crypto';
import { lstat, mkdir, readdir, rm, stat } from 'node:fs/promises';
import { join, relative, resolve } from 'node:path';
import { Logger } from '@nestjs/common';
import { GIT_FETCH_TIMEOUT_MS } from '../../config/publication-timeouts';
import { GitError, GitOptions, redactGit, runGit } from './git';
import { GravityUnavailableError } from './gravity-errors';

/**
 * A lock file older than this belongs to no git command running: none of ours (nor another
 * replica's on the same DATA_DIR) runs longer than a fetch or a push, 120 s, and the 2 s before
 * SIGKILL. One left by a git killed outright (the service killed mid-fetch) made every later
 * fetch fail: "cannot lock ref … File exists".
 */
const STALE_LOCK_MS = GIT_FETCH_TIMEOUT_MS + 30_000;
/** A local command: reading an object, writing one, resolving a name. */
export const LOCAL_TIMEOUT_MS = 15_000;
/** Every branch of the remote, kept apart from our own branch ref. */
const BRANCHES_REFSPEC = '+refs/heads/*:refs/remotes/gravity/*';

export interface GravitySettings {
  repoUrl: string;
  branch: string;
  token: string | undefined;
  /** The local clone lives under `<dataDir>/gravity/`. */
  dataDir: string;
}

/** What a git command of the clone may add to its run (GitOptions' per-call part). */
type GitExtra = Pick<GitOptions, 'env' | 'input' | 'encoding'>;

/**
 * The local bare clone of the Gravity repository, private to this service: git commands run in
 * it, and its fetches. A fetch of the branch, or of every branch, runs at most once at a time,
 * shared by the callers waiting. The URL is given on each fetch and push and never stored in the
 * clone; an https token is sent as a header through the environment.
 */
export class GravityClone {
  private readonly logger = new Logger(GravityClone.name);
  readonly directory: string;
  /** Aborted by `close`: git commands end, and no new one starts. */
  private readonly stopping = new AbortController();
  private fetching: Promise<void> | undefined;
  private fetchStartedAt = 0;
  private fetchingBranches: Promise<void> | undefined;
  private branchesFetchStartedAt = 0;
  private initialized: Promise<void> | undefined;
  private readonly secrets: string[];

  constructor(readonly settings: GravitySettings) {
    const id = createHash('sha256').update(settings.repoUrl).digest('hex').slice(0, 16);
    this.directory = resolve(join(settings.dataDir, 'gravity', id));
    const basic = this.basicCredential();
    this.secrets = [settings.token, basic].filter((secret): secret is string => !!secret);
  }

  /** The repository as it may be shown: no credentials. */
  get description(): string {
    return redactGit(`${this.settings.repoUrl} (branch ${this.settings.branch})`, [
      this.settings.token,
    ]);
  }

  /** When the last fetch of the branch started (epoch ms; 0: none yet). */
  get lastFetchStartedAt(): number {
    return this.fetchStartedAt;
  }

  /** When the last fetch of every branch started (epoch ms; 0: none yet). */
  get lastBranchesFetchStartedAt(): number {
    return this.branchesFetchStartedAt;
  }

  /** Fetches the branch now (callers waiting share one fetch). */
  fetch(): Promise<void> {
    this.fetching ??= this.fetchOnce().finally(() => (this.fetching = undefined));
    return this.fetching;
  }

  private async fetchOnce(): Promise<void> {
    this.fetchStartedAt = Date.now();
    await this.init();
    await this.removeStaleLocks();
    const { repoUrl, branch } = this.settings;
    try {
      await this.git(
        ['fetch', '--quiet', '--no-tags', repoUrl, `+refs/heads/${branch}:refs/heads/${branch}`],
        GIT_FETCH_TIMEOUT_MS,
      );
    } catch (error) {
      // A new repository without the branch yet: nothing to read, and publish starts it.
      if (/couldn't find remote ref/i.test(causeOutput(error))) return;
      throw error;
    }
  }

  /**
   * Fetches every branch of the remote, as the subnet's reader does (`git fetch --all`), into
   * refs of their own (`refs/remotes/gravity/*`): the branch we publish on stays ours to move.
   */
  fetchAllBranches(): Promise<void> {
    this.fetchingBranches ??= this.fetchAllBranchesOnce().finally(
      () => (this.fetchingBranches = undefined),
    );
    return this.fetchingBranches;
  }

  private async fetchAllBranchesOnce(): Promise<void> {
    this.branchesFetchStartedAt = Date.now();
    await this.init();
    await this.removeStaleLocks();
    await this.git(
      ['fetch', '--quiet', '--no-tags', '--prune', this.settings.repoUrl, BRANCHES_REFSPEC],
      GIT_FETCH_TIMEOUT_MS,
    );
  }

  /** Makes the bare clone on first use (again after a failed attempt). */
  init(): Promise<void> {
    this.initialized ??= this.initOnce().catch((error: unknown) => {
      this.initialized = undefined;
      throw error;
    });
    return this.initialized;
  }

  private async initOnce(): Promise<void> {
    const exists = await stat(join(this.directory, 'HEAD')).then(
      () => true,
      () => false,
    );
    if (exists) return this.removeStaleLocks();
    await mkdir(this.directory, { recursive: true });
    await this.git(['init', '--quiet', '--bare'], LOCAL_TIMEOUT_MS);
  }

  /** Ends the git commands running, and refuses new ones: the service is stopping. */
  close(): void {
    this.stopping.abort();
  }

  /**
   * Removes the lock files no git command holds any longer (STALE_LOCK_MS): a ref's
   * (`refs/heads/<branch>.lock`), `packed-refs.lock`, `shallow.lock`, our index's. Done when
   * the clone is opened and before each fetch, so that one left by a git killed outright is
   * cleared once it is old enough, without a restart.
   */
  private async removeStaleLocks(): Promise<void> {
    const refs = join(this.directory, 'refs');
    const names = async (directory: string, recursive: boolean) =>
      (await readdir(directory, { recursive }).catch(() => [] as string[]))
        .filter((name) => name.endsWith('.lock'))
        .map((name) => join(directory, name));
    const now = Date.now();
    for (const path of [...(await names(this.directory, false)), ...(await names(refs, true))]) {
      const lock = await lstat(path).catch(() => undefined);
      if (!lock?.isFile() || now - lock.mtimeMs <= STALE_LOCK_MS) continue;
      await rm(path, { force: true }).then(
        () => this.logger.warn(`removed a stale git lock file: ${relative(this.directory, path)}`),
        (error: Error) => this.logger.warn(`stale git lock file not removed: ${error.message}`),
      );
    }
  }

  async hasCommit(sha: string): Promise<boolean> {
    try {
      await this.git(['cat-file', '-e', `${sha}^{commit}`], LOCAL_TIMEOUT_MS);
      return true;
    } catch (error) {
      if (error instanceof GitError && error.exitCode !== undefined && error.exitCode !== 0)
        return false;
      throw error;
    }
  }

  /**
   * Whether commit `sha` is `ref` or one of its ancestors; false when either is missing from the
   * clone. Asked after a fetch, it says whether the remote's branch still has the commit: the
   * clone keeps the objects of a history the remote rewrote.
   */
  async isAncestor(sha: string, ref: string): Promise<boolean> {
    try {
      await this.git(['merge-base', '--is-ancestor', sha, ref], LOCAL_TIMEOUT_MS);
      return true;
    } catch (error) {
      if (error instanceof GitError && error.exitCode !== undefined && error.exitCode !== 0)
        return false;
      throw error;
    }
  }

  /** The object a revision names, or null when there is none. */
  async revision(name: string): Promise<string | null> {
    try {
      return (await this.git(['rev-parse', '--verify', '--quiet', name], LOCAL_TIMEOUT_MS)).trim();
    } catch (error) {
      if (error instanceof GitError && error.exitCode !== undefined) return null;
      throw error;
    }
  }

  /**
   * Runs `git <args>` in the clone. A local command failing is a GitError; the remote out of
   * reach (a fetch or a push failing, or git not running to an end) is a GravityUnavailableError
   * whose cause is git's error.
   */
  async git(
    args: string[],
    timeoutMs: number,
    maxOutputBytes?: number,
    extra: GitExtra = {},
  ): Promise<string> {
    try {
      return await runGit(['-C', this.directory, ...args], {
        timeoutMs,
        maxOutputBytes,
        config: this.authConfig(),
        secrets: this.secrets,
        signal: this.stopping.signal,
        ...extra,
      });
    } catch (error) {
      const remote = args[0] === 'fetch' || args[0] === 'push';
      if (error instanceof GitError && error.exitCode !== undefined && !remote) throw error;
      throw new GravityUnavailableError(
        `Gravity repository ${this.description}: ${(error as Error).message}`,
        { cause: error },
      );
    }
  }

  /**
   * An https token as GitHub takes it (basic auth, any user name), for this repository's host only.
   */
  private authConfig(): Record<string, string> {
    const basic = this.basicCredential();
    if (!basic) return {};
    const origin = new URL(this.settings.repoUrl).origin;
    return { [`http.${origin}/.extraHeader`]: `Authorization: Basic ${basic}` };
  }

  private basicCredential(): string | undefined {
    const { token, repoUrl } = this.settings;
    if (!token || !repoUrl.startsWith('https://')) return undefined;
    return Buffer.from(`x-access-token:${token}`).toString('base64');
  }
}

/** git's own output behind a failure (a GitError, or the one a GravityUnavailableError wraps). */
export function causeOutput(error: unknown): string {
  const git = error instanceof GitError ? error : (error as Error | undefined)?.cause;
  return git instanceof GitError ? git.output : '';
}
