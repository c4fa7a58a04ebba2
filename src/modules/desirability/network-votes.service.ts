import { Inject, Injectable, NotFoundException } from '@nestjs/common';
import { RetryLaterException } from '../../common/errors/retry-later';
import { AppConfig } from '../../config/app-config';
import { InjectConfig } from '../../config/config.module';
import {
  ChainCommitmentsService,
  ChainUnavailableError,
} from '../../network/chain/chain-commitments.service';
import { GravityUnavailableError } from '../../network/gravity/gravity-errors';
import {
  GRAVITY_GIT,
  GravityGit,
  PREFERENCES_FOLDER,
  PreferencesAtCommit,
} from '../../network/gravity/gravity-git';
import { NetworkVote, readNetworkVote } from './network-vote';
import { NetworkVotesRepository } from './network-votes.repository';
import { SubmittedItem } from './dto/desirability-request.dto';
import { noSubmission } from './desirability-errors';

/**
 * How long a lookup that fetched and still found a commit missing keeps lookups of that commit
 * from fetching again: each lookup of a SHA on no branch fetched the repository twice.
 */
export const MISSING_COMMIT_REFETCH_MS = 60_000;

/** A validator's submission on the network: its commitment and the vote at that commit. */
export interface NetworkSubmission {
  hotkey: string;
  sha: string;
  block: number;
  submitted: SubmittedItem[];
  vote: Extract<NetworkVote, { ok: true }>;
}

/**
 * Validators' votes as the network holds them: the SHA a validator committed on chain, and its
 * `validator_preferences/<hotkey>.json` at that commit in the Gravity repository. Each file is
 * fetched once and kept in Postgres. Reading the network needs both SUBTENSOR_URL and
 * GRAVITY_REPO_URL; without them votes are local (`enabled` is false).
 */
@Injectable()
export class NetworkVotesService {
  /** Commits a lookup's fetch found missing, with when that lookup began (epoch ms). */
  private readonly missingCommits = new Map<string, number>();

  constructor(
    private readonly commitments: ChainCommitmentsService,
    private readonly repository: NetworkVotesRepository,
    @Inject(GRAVITY_GIT) readonly gravity: GravityGit | null,
    @InjectConfig() private readonly config: AppConfig,
  ) {}

  get enabled(): boolean {
    return this.commitments.available && this.gravity !== null;
  }

  /**
   * `hotkey`'s current submission on the network. 404 when it has no commitment or what it
   * committed is no vote (the detail says why); 503 when the chain or the repository is out of
   * reach.
   */
  async submissionOf(hotkey: string): Promise<NetworkSubmission> {
    const commitment = await unavailableAs503(this.commitments.of(hotkey));
    if (!commitment)
      throw new NotFoundException(
        `${noSubmission(hotkey)}: it has no commitment on subnet ${this.config.netuid}`,
      );
    const at = `committed at block ${commitment.block}`;
    if (commitment.sha === undefined)
      throw new NotFoundException(
        `${noSubmission(hotkey)}: its commitment (${at}) is no vote: ${commitment.problem}`,
      );
    const vote = await unavailableAs503(this.lookUp(hotkey, commitment.sha));
    if (!vote.ok)
      throw new NotFoundException(
        `${noSubmission(hotkey)}: ${commitment.sha} (${at}) is no vote: ${vote.reason}`,
      );
    return {
      hotkey,
      sha: commitment.sha,
      block: commitment.block,
      submitted: vote.submitted,
      vote,
    };
  }

  /**
   * The vote in `hotkey`'s preferences file at `sha`: from the cache, else from the repository
   * (fetching it unless a fetch started at or after `fetchedSince`). Throws
   * GravityUnavailableError when the repository cannot be read.
   */
  async voteAt(hotkey: string, sha: string, fetchedSince: number): Promise<NetworkVote> {
    return readNetworkVote(await this.fileAt(hotkey, sha, fetchedSince), pathOf(hotkey), sha);
  }

  /**
   * A lookup's vote. A commit not known yet is fetched for (sharing a fetch that started since
   * the lookup did): a validator commits its SHA on chain after pushing it, so it may be seconds
   * old. Once a lookup's fetch found it missing, lookups of it fetch again only after
   * MISSING_COMMIT_REFETCH_MS (the aggregate job's fetches still bring it in meanwhile): a
   * commitment naming a SHA on no branch made every lookup fetch, read traffic driving calls
   * to GitHub back to back (an audit's finding).
   */
  private async lookUp(hotkey: string, sha: string): Promise<NetworkVote> {
    const now = Date.now();
    const missingSince = this.missingCommits.get(sha);
    const remembered = missingSince !== undefined && now - missingSince < MISSING_COMMIT_REFETCH_MS;
    // Since the lookup that found it missing: that lookup's fetches count, and no others are run.
    const file = await this.fileAt(hotkey, sha, remembered ? missingSince : now);
    if (file.kind !== 'no-commit') this.missingCommits.delete(sha);
    else if (!remembered) this.rememberMissing(sha, now);
    return readNetworkVote(file, pathOf(hotkey), sha);
  }

  /** Keeps `sha` as missing since `now`; commits whose time is up are forgotten. */
  private rememberMissing(sha: string, now: number): void {
    for (const [known, since] of this.missingCommits)
      if (now - since >= MISSING_COMMIT_REFETCH_MS) this.missingCommits.delete(known);
    this.missingCommits.set(sha, now);
  }

  private async fileAt(
    hotkey: string,
    sha: string,
    fetchedSince: number,
  ): Promise<PreferencesAtCommit> {
    if (!this.gravity)
      throw new GravityUnavailableError('no Gravity repository (GRAVITY_REPO_URL)');
    const cached = await this.repository.findFile(hotkey, sha);
    let file: PreferencesAtCommit;
    if (cached !== undefined) {
      file = cached === null ? { kind: 'no-file' } : { kind: 'file', text: cached };
    } else {
      file = await this.gravity.preferencesAt(hotkey, sha, fetchedSince);
      // What a commit holds never changes; a commit not found yet may still be pushed. A text
      // holding U+0000 is no JSON, and Postgres cannot store it: read again from the clone.
      if (file.kind === 'file' && !file.text.includes('\u0000'))
        await this.repository.saveFile(hotkey, sha, file.text);
      if (file.kind === 'no-file') await this.repository.saveFile(hotkey, sha, null);
    }
    return file;
  }
}

const pathOf = (hotkey: string) => `${PREFERENCES_FOLDER}/${hotkey}.json`;

/**
 * The chain or the repository out of reach: a 503 saying which, with Retry-After (the next
 * lookup connects or fetches again; a node refusing connections is dialled again after 1 s,
 * then twice as long after each failure, at most a minute).
 */
async function unavailableAs503<T>(work: Promise<T>): Promise<T> {
  try {
    return await work;
  } catch (error) {
    if (error instanceof ChainUnavailableError)
      throw new RetryLaterException(`The chain cannot be read now: ${error.message}`);
    if (error instanceof GravityUnavailableError) throw new RetryLaterException(error.message);
    throw error;
  }
}
