import { resolve } from 'node:path';
import {
  Injectable,
  Logger,
  OnApplicationBootstrap,
  OnModuleDestroy,
  ServiceUnavailableException,
} from '@nestjs/common';
import { isDatabaseUnavailable } from '../../common/database-unavailable';
import { RetryLaterException } from '../../common/errors/retry-later';
import { isStorableText } from '../../common/validation/storable-text';
import { characterCount } from '../../common/characters';
import { AppConfig } from '../../config/app-config';
import { InjectConfig } from '../../config/config.module';
import { watchFileChanges } from '../../common/files/watch-file-changes';
import { FIRST_RETRY_MS, retryDelay } from '../../common/retry-delay';
import { orLate } from '../../common/within';
import { RepoNamesResponseDto } from './dto/repo-names-response.dto';
import { NOT_UTF8, readRepoNames, RepoFileError, RepoNameValue } from './repo-file-reader';
import { ReposRepository } from './repos.repository';

/**
 * The 503 before the validation data file was first read (documented by the controller), with
 * Retry-After: the ingest at start, or the retry of one the database refused, comes within
 * seconds.
 */
export const NAMES_NOT_LOADED = 'Repository names are not loaded yet, try again shortly';

/**
 * The 503 once the configured file failed to be read and nothing of it was ever stored, completed
 * by why (describeFailure): "… does not exist", "… is invalid: …". No Retry-After: it lasts
 * until an operator puts a good file in place, which no wait of the client's brings about.
 */
export const NAMES_UNAVAILABLE = 'Repository names are unavailable: the validation data file';

/** The original's placeholder for a miner that published no dataset. */
export const NO_DATASET_PROVIDED = 'no_dataset_provided';
/** Longer values are not repository names (Hugging Face ids are far shorter); they are skipped. */
const MAX_NAME_CHARACTERS = 1000;
/**
 * A name is a key of `repo_names`' primary-key btree, whose entries may have 2704 bytes at most
 * (`index row size … exceeds btree version 4 maximum 2704`): 1000 characters of CJK are 3000.
 * Longer UTF-8 is skipped; an ASCII name of 1000 characters (1000 bytes) is still listed.
 */
const MAX_NAME_BYTES = 2000;
/** How often the file is polled for changes (watchFileChanges: writers replace it atomically). */
const POLL_INTERVAL_MS = 1000;
/** How long start-up waits for the first ingest before going on with it in the background. */
const BOOTSTRAP_WAIT_MS = 5000;
/**
 * An ingest the database refused is tried again after this wait, doubled per failure up to
 * RETRY_MAX_MS: the watcher only fires when the file changes, so a change met by an
 * outage was otherwise never applied (docs/decisions.md, "Repositories").
 */
const RETRY_MS = FIRST_RETRY_MS;
const RETRY_MAX_MS = 60_000;

/** Why a value that names a repository is still left out of the list (logged, counted). */
export type SkippedRepoName = { skipped: 'not UTF-8' | 'not storable' | 'too long' };

/**
 * The name a `repo_name` value of the validation file puts in the list, without surrounding
 * white space (` a/b ` and `a/b` are one repository); undefined when it puts none (blank, or
 * no_dataset_provided); or why a name is skipped: bytes that are not UTF-8 (NOT_UTF8), text
 * Postgres cannot store as it is (U+0000, an unpaired surrogate), or over MAX_NAME_CHARACTERS or
 * MAX_NAME_BYTES. Skipped rather than
 * stored, one bad row made the whole ingest fail (docs/decisions.md, "Repositories").
 */
export function listedRepoName(value: RepoNameValue): string | undefined | SkippedRepoName {
  if (value === NOT_UTF8) return { skipped: 'not UTF-8' };
  const name = value?.trim();
  if (!name || name === NO_DATASET_PROVIDED) return undefined;
  if (!isStorableText(name)) return { skipped: 'not storable' };
  if (characterCount(name) > MAX_NAME_CHARACTERS || Buffer.byteLength(name) > MAX_NAME_BYTES)
    return { skipped: 'too long' };
  return name;
}

/**
 * Serves the repository names of the validation data file at HF_RESULTS_PATH. The file is
 * ingested into Postgres at start and whenever it changes; a file that cannot be read leaves
 * the stored list as it was (the last good ingest keeps serving, also across restarts).
 */
@Injectable()
export class ReposService implements OnApplicationBootstrap, OnModuleDestroy {
  private readonly logger = new Logger(ReposService.name);
  /** Absolute, so that the same file configured from another working directory matches. */
  private readonly path: string | undefined;
  private ingesting: Promise<void> = Promise.resolve();
  /**
   * Why the latest ingest in this process failed, for the 503 detail; undefined after a success.
   */
  private lastFailure: string | undefined;
  private stopWatching: (() => void) | undefined;
  /** The next try of an ingest the database refused, and how many were refused in a row. */
  private retryTimer: NodeJS.Timeout | undefined;
  private databaseFailures = 0;
  private stopped = false;

  constructor(
    @InjectConfig() config: AppConfig,
    private readonly repository: ReposRepository,
  ) {
    this.path = config.repos.hfResultsPath ? resolve(config.repos.hfResultsPath) : undefined;
  }

  async onApplicationBootstrap(): Promise<void> {
    if (!this.path) return;
    this.stopWatching = watchFileChanges(this.path, POLL_INTERVAL_MS, () => void this.ingest());
    await orLate(this.ingest(), BOOTSTRAP_WAIT_MS);
  }

  async onModuleDestroy(): Promise<void> {
    this.stopped = true;
    this.stopWatching?.();
    clearTimeout(this.retryTimer);
    await this.ingesting; // before the database connection closes
  }

  async listRepoNames(): Promise<RepoNamesResponseDto> {
    if (!this.path) return { count: 0, repo_names: [] };
    const names = await this.repository.findNamesIngestedFrom(this.path);
    if (names === null) {
      if (this.lastFailure)
        throw new ServiceUnavailableException(`${NAMES_UNAVAILABLE} ${this.lastFailure}`);
      throw new RetryLaterException(NAMES_NOT_LOADED);
    }
    return { count: names.length, repo_names: names };
  }

  /** Re-reads the file into the table (at start, or changed): its retries start over. */
  private ingest(): Promise<void> {
    return this.enqueue(true);
  }

  /**
   * Queues an ingest after the one running, so two never interleave. Each supersedes a retry
   * still waiting; `changed` (the file was, or start-up) starts the retry waits over.
   */
  private enqueue(changed: boolean): Promise<void> {
    this.ingesting = this.ingesting.then(() => {
      clearTimeout(this.retryTimer);
      this.retryTimer = undefined;
      if (changed) this.databaseFailures = 0;
      return this.ingestOnce(this.path!);
    });
    return this.ingesting;
  }

  private async ingestOnce(path: string): Promise<void> {
    let rows = 0;
    // Per reason: how many rows, and the first one's number (one log line, however many).
    const skipped = new Map<SkippedRepoName['skipped'], { rows: number; first: number }>();
    const listed = async function* (): AsyncGenerator<string> {
      for await (const value of readRepoNames(path)) {
        rows += 1;
        const name = listedRepoName(value);
        if (typeof name === 'string') yield name;
        else if (name !== undefined) {
          const seen = skipped.get(name.skipped);
          if (seen) seen.rows += 1;
          else skipped.set(name.skipped, { rows: 1, first: rows });
        }
      }
    };
    try {
      const count = await this.repository.replaceNames(path, listed());
      this.lastFailure = undefined;
      this.databaseFailures = 0;
      this.logger.log(`repository names from ${path}: ${count} names from ${rows} rows`);
      if (skipped.size > 0)
        this.logger.warn(
          `repository names from ${path}: rows skipped, ` +
            [...skipped]
              .map(([why, { rows, first }]) => `${rows} ${why} (the first is row ${first})`)
              .join(', '),
        );
    } catch (error) {
      const refused = isDatabaseUnavailable(error);
      // A refusal is no fault of the file, which is read again at the retry: until then the
      // answer is "not loaded yet" (it said the file "could not be loaded").
      this.lastFailure = refused ? undefined : describeFailure(error);
      // A file that cannot be read or is invalid is read again when it changes; the database
      // coming back is not seen by the watcher.
      const retry = refused ? this.retryLater() : undefined;
      this.logger.error(
        `repository names from ${path} not applied, keeping the stored ones` +
          (retry === undefined ? '' : ` (tried again in ${retry / 1000} s)`) +
          `: ${(error as Error).message}`,
      );
    }
  }

  /** Schedules the next try of an ingest the database refused; returns its wait in ms. */
  private retryLater(): number | undefined {
    if (this.stopped) return undefined;
    const wait = retryDelay(this.databaseFailures, RETRY_MS, RETRY_MAX_MS);
    this.databaseFailures += 1;
    this.retryTimer = setTimeout(() => void this.enqueue(false), wait);
    return wait;
  }
}

/** Completes "the validation data file …" for clients; the path and full error go to the log. */
function describeFailure(error: unknown): string {
  const code = (error as NodeJS.ErrnoException).code;
  if (code === 'ENOENT') return 'does not exist';
  if (code === 'EACCES' || code === 'EPERM') return 'cannot be read (permission denied)';
  if (error instanceof RepoFileError) return `is invalid: ${error.message}`;
  return 'could not be loaded';
}
