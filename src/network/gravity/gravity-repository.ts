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
/** A push of one small commit; a stuck remote is given up. */
const PUSH_TIMEOUT_MS = 120_000;
/** Pushes refused because the remote moved, redone on top of it, before publish fails. */
const PUSH_ATTEMPTS = 5;
const SHA = /^[0-9a-f]{40}$/;
/** Every branch of the remote, kept apart from our own branch ref. */
const BRANCHES_REFSPEC = '+refs/heads/*:refs/remotes/gravity/*';
/** An ss58 address: base58, so it is safe as a file name. */
const HOTKEY = /^[1-9A-HJ-NP-Za-km-z]{40,60}$/;

/** Nest token of the one GravityRepository (null without GRAVITY_REPO_URL). */
export const GRAVITY_REPOSITORY = Symbol('GRAVITY_REPOSITORY');

/** What the repository holds for a hotkey at a commit. */
export type PreferencesAtCommit =
  | { kind: 'file'; text: string }
  /** The commit exists and has no such file: final, a commit never changes. */
  | { kind: 'no-file' }
  | { kind: 'too-large'; bytes: number }
  /** The file's bytes are not UTF-8 text, which the subnet's reader opens it as. */
  | { kind: 'not-utf8' }
  /** The commit is on none of the repository's branches (after fetching them all). */
  | { kind: 'no-commit' };

/** The repository could not be reached or read. */
export class GravityUnavailableError extends Error {
  override readonly name = 'GravityUnavailableError';
}

/** What `publish` left on the branch. */
export interface PushResult {
  /** The commit whose tree holds the file: ours, or the remote's head when it held it already. */
  sha: string;
  /** False when the remote already had exactly this file: nothing was committed. */
  pushed: boolean;
}

/**
 * A refusal saying the branch moved since our fetch: `[rejected]` (fetch first, non-fast-forward,
 * stale info), or `[remote rejected]` when the remote lost a race for the branch's lock, as
 * GitHub answers two pushes at once (`cannot lock ref`, `failed to update ref`, `incorrect old
 * value provided`). Any other `[remote rejected]` is a hook's or a rule's refusal (`pre-receive
 * hook declined`, a protected branch), which no retry changes.
 */
const BRANCH_MOVED =
  /\[rejected\]|\[remote rejected\] \((cannot lock ref|failed to update ref|incorrect old value)/i;

/** The remote refused the push because its branch moved since our fetch. */
class PushRejectedError extends GitError {}

export interface GravitySettings {
  repoUrl: string;
  branch: string;
  token: string | undefined;
  /** The local clone lives under `<dataDir>/gravity/`. */
  dataDir: string;
}

/**
 * A local bare clone of the Gravity repository, private to this service, for reading
 * validators' files and publishing ours. Reading: `git fetch` of the branch when a commit is not
 * known yet, then of every branch when it is still unknown (the subnet's reader runs `git fetch
 * --all` and checks the SHA out, so a vote committed on any branch counts); at most one fetch of
 * each at a time, shared by the callers waiting; then `git show
 * <sha>:validator_preferences/<hotkey>.json`. Publishing: our file becomes one commit on top of
 * the fetched branch, built with git's plumbing (blob, an index file of our own, tree, commit),
 * never in a checkout, then pushed. The URL is given on each fetch and push and never stored in
 * the clone; an https token is sent as a header through the environment.
 */
export class GravityRepository {
  readonly directory: string;
  private fetching: Promise<void> | undefined;
  private lastFetchStartedAt = 0;
  private fetchingBranches: Promise<void> | undefined;
  private lastBranchesFetchStartedAt = 0;
  private initialized: Promise<void> | undefined;
  private readonly secrets: string[];

  /**
   * Runs between our fetch and our push (tests: another validator pushing just then). Never set
   * in production.
   */
  beforePush: (() => Promise<void>) | undefined;

  constructor(private readonly settings: GravitySettings) {
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

  /**
   * The preferences file of `hotkey` at commit `sha`. A commit not in the clone is fetched for,
   * on the branch and then on every branch, unless a fetch of the same started at or after
   * `fetchedSince` (epoch ms): it would not have it either.
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
      if (!(await this.hasCommit(sha)) && this.lastBranchesFetchStartedAt < fetchedSince)
        await this.fetchAllBranches();
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
    const raw = await this.git(['show', object], READ_TIMEOUT_MS, bytes + 1024, {
      encoding: 'latin1',
    });
    // Decoded as the subnet's reader decodes it (open(path, 'r') in a UTF-8 locale): a byte
    // that is not UTF-8 fails it, where Node's decoding would put U+FFFD in its place. A BOM is
    // kept, as Python keeps it (json.load then fails on it, as JSON.parse does).
    try {
      const text = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true }).decode(
        Buffer.from(raw, 'latin1'),
      );
      return { kind: 'file', text };
    } catch {
      return { kind: 'not-utf8' };
    }
  }

  /** Fetches the branch now (callers waiting share one fetch). */
  fetch(): Promise<void> {
    this.fetching ??= this.fetchOnce().finally(() => (this.fetching = undefined));
    return this.fetching;
  }

  private async fetchOnce(): Promise<void> {
    this.lastFetchStartedAt = Date.now();
    await this.init();
    const { repoUrl, branch } = this.settings;
    try {
      await this.git(
        ['fetch', '--quiet', '--no-tags', repoUrl, `+refs/heads/${branch}:refs/heads/${branch}`],
        FETCH_TIMEOUT_MS,
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
  private fetchAllBranches(): Promise<void> {
    this.fetchingBranches ??= this.fetchAllBranchesOnce().finally(
      () => (this.fetchingBranches = undefined),
    );
    return this.fetchingBranches;
  }

  private async fetchAllBranchesOnce(): Promise<void> {
    this.lastBranchesFetchStartedAt = Date.now();
    await this.init();
    await this.git(
      ['fetch', '--quiet', '--no-tags', '--prune', this.settings.repoUrl, BRANCHES_REFSPEC],
      FETCH_TIMEOUT_MS,
    );
  }

  /**
   * Makes `content` the file of `hotkey` on the branch: fetches the branch, commits the file on
   * top of it unless it holds exactly that already, and pushes. A push refused because someone
   * pushed meanwhile is redone on top of the new head, up to PUSH_ATTEMPTS times.
   */
  async publish(hotkey: string, content: string): Promise<PushResult> {
    if (!HOTKEY.test(hotkey)) throw new Error(`not an ss58 hotkey: ${hotkey}`);
    await this.init();
    const path = `${PREFERENCES_FOLDER}/${hotkey}.json`;
    for (let attempt = 1; ; attempt += 1) {
      await this.fetch();
      const head = await this.revision(`refs/heads/${this.settings.branch}^{commit}`);
      const blob = (
        await this.git(['hash-object', '-w', '--stdin'], READ_TIMEOUT_MS, undefined, {
          input: content,
        })
      ).trim();
      if (head && (await this.revision(`${head}:${path}`)) === blob)
        return { sha: head, pushed: false };
      // The subnet's uploader's message (desirability_uploader.py, upload_to_github).
      const commit = await this.commitOnto(head, path, blob, `Add ${hotkey} preferences JSON file`);
      await this.beforePush?.();
      try {
        await this.push(commit);
        return { sha: commit, pushed: true };
      } catch (error) {
        if (!(error instanceof PushRejectedError) || attempt >= PUSH_ATTEMPTS) throw error;
      }
    }
  }

  /** The object a revision names, or null when there is none. */
  private async revision(name: string): Promise<string | null> {
    try {
      return (await this.git(['rev-parse', '--verify', '--quiet', name], READ_TIMEOUT_MS)).trim();
    } catch (error) {
      if (error instanceof GitError && error.exitCode !== undefined) return null;
      throw error;
    }
  }

  /** A commit of `head`'s tree with `path` set to `blob` (an index file of our own, no checkout). */
  private async commitOnto(
    head: string | null,
    path: string,
    blob: string,
    message: string,
  ): Promise<string> {
    const env = { GIT_INDEX_FILE: join(this.directory, 'publish-index') };
    const git = async (args: string[], extra: Record<string, string> = env) =>
      (await this.git(args, READ_TIMEOUT_MS, undefined, { env: extra })).trim();
    await git(head ? ['read-tree', head] : ['read-tree', '--empty']);
    await git(['update-index', '--add', '--cacheinfo', `100644,${blob},${path}`]);
    const tree = await git(['write-tree']);
    return git(['commit-tree', tree, ...(head ? ['-p', head] : []), '-m', message], AUTHOR);
  }

  private async push(commit: string): Promise<void> {
    const { repoUrl, branch } = this.settings;
    try {
      await this.git(
        ['push', '--porcelain', repoUrl, `${commit}:refs/heads/${branch}`],
        PUSH_TIMEOUT_MS,
      );
    } catch (error) {
      const output = causeOutput(error);
      if (BRANCH_MOVED.test(output))
        throw new PushRejectedError(`push refused, the branch moved: ${output}`, 1, output);
      const refusal = /\[remote rejected\][^\n]*/i.exec(output);
      if (!refusal) throw error;
      // A hook (a protected branch, a permission) said no: pushing again would hear the same.
      const remote = output
        .split('\n')
        .filter((line) => line.startsWith('remote:'))
        .map((line) => line.trim());
      throw new GravityUnavailableError(
        `Gravity repository ${this.description}: push refused, not retried: ` +
          [refusal[0].trim(), ...remote].join('; '),
        { cause: error },
      );
    }
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

  /**
   * A local command failing is a GitError; the remote out of reach (a fetch or a push failing,
   * or git not running to an end) is a GravityUnavailableError whose cause is git's error.
   */
  private async git(
    args: string[],
    timeoutMs: number,
    maxOutputBytes?: number,
    extra: { env?: Record<string, string>; input?: string; encoding?: 'latin1' } = {},
  ): Promise<string> {
    try {
      return await runGit(['-C', this.directory, ...args], {
        timeoutMs,
        maxOutputBytes,
        config: this.authConfig(),
        secrets: this.secrets,
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

  /** An https token as GitHub takes it (basic auth, any user name), for this repository's host only. */
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
function causeOutput(error: unknown): string {
  const git = error instanceof GitError ? error : (error as Error | undefined)?.cause;
  return git instanceof GitError ? git.output : '';
}

/** Who our commits are by: the service, not whoever runs it (no global git identity is read). */
const AUTHOR = {
  GIT_AUTHOR_NAME: 'validator-gateway',
  GIT_AUTHOR_EMAIL: 'validator-gateway@users.noreply.github.com',
  GIT_COMMITTER_NAME: 'validator-gateway',
  GIT_COMMITTER_EMAIL: 'validator-gateway@users.noreply.github.com',
};
