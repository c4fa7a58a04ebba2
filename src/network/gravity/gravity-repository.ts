import { createHash } from 'node:crypto';
import { mkdir, stat } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { GitError, redactGit, runGit } from './git';

/** Where validators keep their votes in the Gravity repository. */
export const PREFERENCES_FOLDER = 'validator_preferences';
/** A preferences file larger than this is no vote (a vote of 100,000 jobs is about 20 MB). */
export const MAX_PREFERENCES_BYTES = 32 * 1024 * 1024;

const FETCH_TIMEOUT_MS = 120_000;
const READ_TIMEOUT_MS = 15_000;
const SHA = /^[0-9a-f]{40}$/;
/** An ss58 address: base58, so it is safe as a file name. */
const HOTKEY = /^[1-9A-HJ-NP-Za-km-z]{40,60}$/;

/** What the repository holds for a hotkey at a commit. */
export type PreferencesAtCommit =
  | { kind: 'file'; text: string }
  /** The commit exists and has no such file: final, a commit never changes. */
  | { kind: 'no-file' }
  | { kind: 'too-large'; bytes: number }
  /** The commit is not in the repository (after a fetch of the branch). */
  | { kind: 'no-commit' };

/** The repository could not be reached or read. */
export class GravityUnavailableError extends Error {
  override readonly name = 'GravityUnavailableError';
}

export interface GravitySettings {
  repoUrl: string;
  branch: string;
  token: string | undefined;
  /** The local clone lives under `<dataDir>/gravity/`. */
  dataDir: string;
}

/**
 * A local bare clone of the Gravity repository, fetched on demand: `git fetch` of the branch
 * when a commit is not known yet (at most one fetch at a time, shared by the callers waiting),
 * then `git show <sha>:validator_preferences/<hotkey>.json`. The URL is given on each fetch and
 * never stored in the clone; an https token is sent as a header through the environment.
 */
export class GravityRepository {
  readonly directory: string;
  private fetching: Promise<void> | undefined;
  private lastFetchStartedAt = 0;
  private initialized: Promise<void> | undefined;

  constructor(private readonly settings: GravitySettings) {
    const id = createHash('sha256').update(settings.repoUrl).digest('hex').slice(0, 16);
    this.directory = resolve(join(settings.dataDir, 'gravity', id));
  }

  /** The repository as it may be shown: no credentials. */
  get description(): string {
    return redactGit(`${this.settings.repoUrl} (branch ${this.settings.branch})`, [
      this.settings.token,
    ]);
  }

  /**
   * The preferences file of `hotkey` at commit `sha`. A commit not in the clone is fetched for,
   * unless a fetch started at or after `fetchedSince` (epoch ms): it would not have it either.
   */
  async preferencesAt(
    hotkey: string,
    sha: string,
    fetchedSince: number,
  ): Promise<PreferencesAtCommit> {
    if (!SHA.test(sha)) throw new Error(`not a git SHA: ${sha}`);
    if (!HOTKEY.test(hotkey)) throw new Error(`not an ss58 hotkey: ${hotkey}`);
    await this.init();
    if (!(await this.hasCommit(sha))) {
      if (this.lastFetchStartedAt < fetchedSince) await this.fetch();
      if (!(await this.hasCommit(sha))) return { kind: 'no-commit' };
    }
    const object = `${sha}:${PREFERENCES_FOLDER}/${hotkey}.json`;
    const size = await this.git(['cat-file', '-s', object], READ_TIMEOUT_MS).catch(
      (error: unknown) => {
        if (error instanceof GitError && error.exitCode === 128) return undefined;
        throw error;
      },
    );
    if (size === undefined) return { kind: 'no-file' };
    const bytes = Number(size.trim());
    if (bytes > MAX_PREFERENCES_BYTES) return { kind: 'too-large', bytes };
    const text = await this.git(['show', object], READ_TIMEOUT_MS, bytes + 1024);
    return { kind: 'file', text };
  }

  /** Fetches the branch now (callers waiting share one fetch). */
  fetch(): Promise<void> {
    this.fetching ??= this.fetchOnce().finally(() => (this.fetching = undefined));
    return this.fetching;
  }

  private async fetchOnce(): Promise<void> {
    this.lastFetchStartedAt = Date.now();
    const { repoUrl, branch } = this.settings;
    await this.git(
      ['fetch', '--quiet', '--no-tags', repoUrl, `+refs/heads/${branch}:refs/heads/${branch}`],
      FETCH_TIMEOUT_MS,
    );
  }

  private init(): Promise<void> {
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
    if (exists) return;
    await mkdir(this.directory, { recursive: true });
    await this.git(['init', '--quiet', '--bare'], READ_TIMEOUT_MS);
  }

  private async hasCommit(sha: string): Promise<boolean> {
    try {
      await this.git(['cat-file', '-e', `${sha}^{commit}`], READ_TIMEOUT_MS);
      return true;
    } catch (error) {
      if (error instanceof GitError && error.exitCode !== undefined && error.exitCode !== 0)
        return false;
      throw error;
    }
  }

  private async git(args: string[], timeoutMs: number, maxOutputBytes?: number): Promise<string> {
    try {
      return await runGit(['-C', this.directory, ...args], {
        timeoutMs,
        maxOutputBytes,
        config: this.authConfig(),
        secrets: [this.settings.token],
      });
    } catch (error) {
      if (error instanceof GitError && error.exitCode !== undefined && args[0] !== 'fetch')
        throw error;
      throw new GravityUnavailableError(
        `Gravity repository ${this.description}: ${(error as Error).message}`,
      );
    }
  }

  /** An https token as GitHub takes it (basic auth, any user name), for this repository's host only. */
  private authConfig(): Record<string, string> {
    const { token, repoUrl } = this.settings;
    if (!token || !repoUrl.startsWith('https://')) return {};
    const basic = Buffer.from(`x-access-token:${token}`).toString('base64');
    const origin = new URL(repoUrl).origin;
    return { [`http.${origin}/.extraHeader`]: `Authorization: Basic ${basic}` };
  }
}
