import { join } from 'node:path';
import type { OnModuleDestroy } from '@nestjs/common';
import { GIT_PUSH_TIMEOUT_MS } from '../../config/publication-timeouts';
import { GitError } from './git';
import { causeOutput, GravityClone, GravitySettings, LOCAL_TIMEOUT_MS } from './gravity-clone';
import { GravityUnavailableError } from './gravity-errors';

/** Where validators keep their votes in the Gravity repository. */
export const PREFERENCES_FOLDER = 'validator_preferences';
/** A preferences file larger than this is no vote (a vote of 100,000 jobs is about 20 MB). */
export const MAX_PREFERENCES_BYTES = 32 * 1024 * 1024;

/** Pushes refused because the remote moved, redone on top of it, before publish fails. */
const PUSH_ATTEMPTS = 5;
const SHA = /^[0-9a-f]{40}$/;
/** An ss58 address: base58, so it is safe as a file name. */
const HOTKEY = /^[1-9A-HJ-NP-Za-km-z]{40,60}$/;

/** Nest token of the one GravityGit (null without GRAVITY_REPO_URL). */
export const GRAVITY_GIT = Symbol('GRAVITY_GIT');

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

/**
 * The Gravity repository over git, for reading validators' files and publishing ours, through a
 * local bare clone of its own (gravity-clone.ts). Not named `…Repository`: here that means a
 * class holding SQL. Reading: `git fetch` of the branch when a commit is not known yet, then of
 * every branch when it is still unknown (the subnet's reader runs `git fetch --all` and checks
 * the SHA out, so a vote committed on any branch counts); then `git show
 * <sha>:validator_preferences/<hotkey>.json`. Publishing: our file becomes one commit on top of
 * the fetched branch, built with git's plumbing (blob, an index file of our own, tree, commit),
 * never in a checkout, then pushed.
 */
export class GravityGit implements OnModuleDestroy {
  private readonly clone: GravityClone;

  /**
   * Runs between our fetch and our push (tests: another validator pushing just then). Never set
   * in production.
   */
  beforePush: (() => Promise<void>) | undefined;

  constructor(settings: GravitySettings) {
    this.clone = new GravityClone(settings);
  }

  /** Shutdown (Nest calls it on the provider): a fetch or a push running ends now. */
  onModuleDestroy(): void {
    this.clone.close();
  }

  /** The local clone's directory. */
  get directory(): string {
    return this.clone.directory;
  }

  /** The repository as it may be shown: no credentials. */
  get description(): string {
    return this.clone.description;
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
    const clone = this.clone;
    await clone.init();
    if (!(await clone.hasCommit(sha))) {
      if (clone.lastFetchStartedAt < fetchedSince) await clone.fetch();
      if (!(await clone.hasCommit(sha)) && clone.lastBranchesFetchStartedAt < fetchedSince)
        await clone.fetchAllBranches();
      if (!(await clone.hasCommit(sha))) return { kind: 'no-commit' };
    }
    const object = `${sha}:${PREFERENCES_FOLDER}/${hotkey}.json`;
    const size = await clone
      .git(['cat-file', '-s', object], LOCAL_TIMEOUT_MS)
      .catch((error: unknown) => {
        if (error instanceof GitError && error.exitCode === 128) return undefined;
        throw error;
      });
    if (size === undefined) return { kind: 'no-file' };
    const bytes = Number(size.trim());
    if (bytes > MAX_PREFERENCES_BYTES) return { kind: 'too-large', bytes };
    const raw = await clone.git(['show', object], LOCAL_TIMEOUT_MS, bytes + 1024, {
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

  /**
   * Whether commit `sha` is on the branch as the remote has it: fetched first unless `fetched`
   * (the caller fetched it within this attempt). A history rewritten on the remote (a force push)
   * drops commits the clone still holds, and a reader cloning afresh cannot check them out.
   */
  async onBranch(sha: string, { fetched = false } = {}): Promise<boolean> {
    if (!SHA.test(sha)) throw new Error(`not a git SHA: ${sha}`);
    const clone = this.clone;
    await clone.init();
    if (!fetched) await clone.fetch();
    return clone.isAncestor(sha, `refs/heads/${clone.settings.branch}`);
  }

  /**
   * Makes `content` the file of `hotkey` on the branch: fetches the branch (unless `fetched`: the
   * caller just did, and a publication attempt's lease counts one fetch), commits the file on
   * top of it unless it holds exactly that already, and pushes. A push refused because someone
   * pushed meanwhile is redone on top of the new head, up to PUSH_ATTEMPTS times.
   */
  async publish(hotkey: string, content: string, { fetched = false } = {}): Promise<PushResult> {
    if (!HOTKEY.test(hotkey)) throw new Error(`not an ss58 hotkey: ${hotkey}`);
    const clone = this.clone;
    await clone.init();
    const path = `${PREFERENCES_FOLDER}/${hotkey}.json`;
    for (let attempt = 1; ; attempt += 1) {
      if (attempt > 1 || !fetched) await clone.fetch();
      const head = await clone.revision(`refs/heads/${clone.settings.branch}^{commit}`);
      const blob = (
        await clone.git(['hash-object', '-w', '--stdin'], LOCAL_TIMEOUT_MS, undefined, {
          input: content,
        })
      ).trim();
      if (head && (await clone.revision(`${head}:${path}`)) === blob)
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

  /**
   * A commit of `head`'s tree with `path` set to `blob` (an index file of our own, no checkout).
   */
  private async commitOnto(
    head: string | null,
    path: string,
    blob: string,
    message: string,
  ): Promise<string> {
    const env = { GIT_INDEX_FILE: join(this.clone.directory, 'publish-index') };
    const git = async (args: string[], extra: Record<string, string> = env) =>
      (await this.clone.git(args, LOCAL_TIMEOUT_MS, undefined, { env: extra })).trim();
    await git(head ? ['read-tree', head] : ['read-tree', '--empty']);
    await git(['update-index', '--add', '--cacheinfo', `100644,${blob},${path}`]);
    const tree = await git(['write-tree']);
    return git(['commit-tree', tree, ...(head ? ['-p', head] : []), '-m', message], AUTHOR);
  }

  private async push(commit: string): Promise<void> {
    const { repoUrl, branch } = this.clone.settings;
    try {
      await this.clone.git(
        ['push', '--porcelain', repoUrl, `${commit}:refs/heads/${branch}`],
        GIT_PUSH_TIMEOUT_MS,
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
        `Gravity repository ${this.description}: push refused by its rules (retried after the usual wait): ` +
          [refusal[0].trim(), ...remote].join('; '),
        { cause: error },
      );
    }
  }
}

/** Who our commits are by: the service, not whoever runs it (no global git identity is read). */
const AUTHOR = {
  GIT_AUTHOR_NAME: 'validator-gateway',
  GIT_AUTHOR_EMAIL: 'validator-gateway@users.noreply.github.com',
  GIT_COMMITTER_NAME: 'validator-gateway',
  GIT_COMMITTER_EMAIL: 'validator-gateway@users.noreply.github.com',
};
