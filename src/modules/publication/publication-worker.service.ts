import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import {
  BeforeApplicationShutdown,
  Inject,
  Injectable,
  Logger,
  OnApplicationBootstrap,
  OnModuleDestroy,
} from '@nestjs/common';
import { Clock } from '../../common/clock/clock';
import { MetricsService } from '../../common/metrics/metrics.service';
import { AppConfig } from '../../config/app-config';
import { InjectConfig } from '../../config/config.module';
import { ValidatorIdentity } from '../../network/bittensor/validator-identity';
import { ChainCommitmentsService } from '../../network/chain/chain-commitments.service';
import {
  CommitmentRateLimitedError,
  Inclusion,
  BLOCK_MS,
  CommitmentRule,
  CommitmentWindow,
} from '../../network/chain/commitment-results';
import { GRAVITY_GIT, GravityGit } from '../../network/gravity/gravity-git';
import { TasksService } from '../tasks/tasks.service';
import { PublicationRepository } from './publication.repository';
import { PublicationService } from './publication.service';
import { Claim, lostClaim, PublicationRow } from './publication.types';
import { retryDelay } from '../../common/retry-delay';

/**
 * Our commitment on chain of the vote: the SHA committed (the push's, or one holding the same
 * file).
 */
type Committed = Inclusion & { sha: string };

/**
 * Past the block the chain takes commitments again from: the head read was made up to a block
 * after it was produced, and a block may come late; early costs another refused commitment.
 */
const WINDOW_MARGIN_MS = 2 * BLOCK_MS;

/**
 * How often a replica checks that the Gravity repository still has the committed vote's commit:
 * a fetch of the branch an hour, for an event as rare as a rewritten history (until it is
 * found, the network does not count the vote).
 */
const COMMITTED_CHECK_MS = 60 * 60_000;

/** Why the chain would refuse a commitment now, by the rule its storage keeps. */
const TOO_SOON: Record<CommitmentRule, string> = {
  space: "our commitments used this epoch's space on the subnet (Commitments.UsedSpaceOf)",
  rate: 'our last commitment is less than RateLimit blocks old (Commitments.LastCommitment)',
};

/**
 * The wait until the chain takes a commitment again (its head and that block, 12 s apart) plus
 * the margin, never less than `retryMs`. Bounded by the rule's interval, not by
 * PUBLICATION_RETRY_MAX_MS: subnet 13's epoch (72 minutes) is longer than its default hour, and a
 * retry an hour into the epoch would pay a second refusal (docs/decisions.md, "The rate limit.").
 */
function windowDelay(window: CommitmentWindow, retryMs: number): number {
  const blocks = Math.min(Math.max(0, window.acceptedFrom - window.head), window.intervalBlocks);
  return Math.max(retryMs, blocks * BLOCK_MS + WINDOW_MARGIN_MS);
}

/**
 * Publishes the queued vote in the background, every PUBLICATION_INTERVAL_MS: claims it (one
 * replica at a time, for PUBLICATION_LEASE_MS), pushes its file to the Gravity repository,
 * records the SHA, commits the SHA on chain and waits for the block. Every step is recorded in
 * Postgres before the next, so a restart resumes where it stopped: a vote already pushed is
 * committed with its stored SHA, never pushed again, and a SHA our CommitmentOf already holds
 * (submitted just before a restart) is recorded, not submitted again. A failure is retried after a
 * wait that doubles per failure (PUBLICATION_RETRY_MS up to PUBLICATION_RETRY_MAX_MS); the chain's
 * rate limit is a wait until it takes commitments again, not a failure, and a commitment its
 * storage says it would refuse is not submitted. A vote replaced while being published is dropped
 * for the newer one.
 */
@Injectable()
export class PublicationWorker
  implements OnApplicationBootstrap, OnModuleDestroy, BeforeApplicationShutdown
{
  private readonly logger = new Logger(PublicationWorker.name);
  /** Names this replica's claims (a restarted process is another claimant). */
  private readonly claimant = `${hostname().slice(0, 40)}:${process.pid}:${randomBytes(4).toString('hex')}`;
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;
  private stopping = false;
  private readonly hotkey: string;
  /** When this replica last checked the committed vote (performance.now(); never yet). */
  private committedCheckedAt = -Infinity;

  constructor(
    private readonly repository: PublicationRepository,
    private readonly publication: PublicationService,
    private readonly tasks: TasksService,
    private readonly metrics: MetricsService,
    private readonly clock: Clock,
    private readonly commitments: ChainCommitmentsService,
    identity: ValidatorIdentity,
    /** The Gravity clone the votes are read from too (null: disabled); tests reach `beforePush`. */
    @Inject(GRAVITY_GIT) readonly gravity: GravityGit | null,
    @InjectConfig() private readonly config: AppConfig,
  ) {
    this.hotkey = identity.hotkey;
  }

  onApplicationBootstrap(): void {
    if (!this.publication.enabled) return;
    this.timer = setInterval(() => void this.runOnce(), this.config.publication.intervalMs);
    this.timer.unref();
  }

  async onModuleDestroy(): Promise<void> {
    this.stopping = true;
    clearInterval(this.timer);
    // An attempt waiting on the chain ends now (and is recorded as failed, to be retried). The
    // connection is shared and the whole application is stopping: closing it twice is harmless.
    if (this.running) await this.commitments.close();
  }

  beforeApplicationShutdown(): Promise<void> | undefined {
    return this.running;
  }

  /**
   * Publishes what is due, if this replica gets the claim, after checking the committed vote
   * when that is due (also used by tests).
   */
  runOnce(): Promise<void> {
    if (!this.publication.enabled || this.stopping) return Promise.resolve();
    this.running ??= this.checkCommittedWhenDue()
      .then(() => this.drain())
      .catch((error: Error) => this.logger.warn(`vote publication: ${error.message}`))
      .finally(() => (this.running = undefined));
    return this.running;
  }

  private async checkCommittedWhenDue(): Promise<void> {
    const now = performance.now();
    if (now - this.committedCheckedAt < COMMITTED_CHECK_MS) return;
    this.committedCheckedAt = now;
    await this.checkCommitted().catch((error: Error) =>
      this.logger.warn(
        `could not check that the committed vote is still in the Gravity repository: ${error.message}`,
      ),
    );
  }

  /**
   * Whether the Gravity repository's branch still has the committed vote's commit (fetched now);
   * a vote whose commit a rewritten history dropped (a force push, a squash) goes back to the
   * push, due at once: the chain names a commit that validators cloning the repository afresh
   * cannot check out, so the network no longer counts the vote (an audit's finding). Pushed
   * again it is committed again, an extrinsic and the epoch's commitment space: only for a
   * commit gone. Public for tests.
   */
  async checkCommitted(): Promise<void> {
    const row = await this.repository.find(this.hotkey);
    const sha = row?.commit_sha?.trim();
    if (row?.state !== 'committed' || !sha) return;
    if (await this.gravity!.onBranch(sha)) return;
    const reason = `commit ${sha}, committed on chain in block ${row.block_number}, is no longer on the Gravity repository's branch (its history was rewritten): the vote is pushed and committed again`;
    if (!(await this.repository.restartCommitted(row, reason, this.clock.now()))) return;
    this.logger.warn(`vote ${row.version}: ${reason}`);
    await this.tasks.forgetNetworkRegistration(sha);
  }

  private async drain(): Promise<void> {
    while (!this.stopping) {
      const now = this.clock.now();
      const until = new Date(now.getTime() + this.config.publication.leaseMs);
      const row = await this.repository.claim(this.hotkey, this.claimant, now, until);
      if (!row) return;
      await this.advance(row);
    }
  }

  private async advance(row: PublicationRow): Promise<void> {
    const claim: Claim = { hotkey: row.hotkey, version: row.version, claimant: this.claimant };
    let step: 'push' | 'commit' = 'push';
    // Failures in a row: a recorded push is progress, which starts the count over (recordPushed).
    let failures = row.attempts;
    try {
      let sha = row.commit_sha?.trim();
      // A SHA an earlier attempt pushed is committed only while the branch still has it: its
      // history rewritten meanwhile (a force push), the chain would name a commit that a reader
      // cloning afresh cannot check out (an audit's finding). Pushed again, onto the branch as it
      // is, fetched by this check: the lease counts one fetch (publication-timeouts.ts).
      const fetched = Boolean(sha);
      if (sha && !(await this.gravity!.onBranch(sha))) {
        this.logger.warn(
          `vote ${row.version}: commit ${sha} is no longer on the Gravity repository's branch (its history was rewritten): pushing the vote again`,
        );
        sha = undefined;
      }
      if (!sha) {
        this.metrics.recordPublicationAttempt('push');
        const pushed = await this.gravity!.publish(row.hotkey, row.content, { fetched });
        sha = pushed.sha;
        this.logger.log(
          pushed.pushed
            ? `vote ${row.version} pushed to the Gravity repository: ${sha}`
            : `vote ${row.version} already in the Gravity repository at ${sha}: nothing to push`,
        );
        if (!(await this.repository.recordPushed(claim, sha, this.clock.now())))
          return this.lost(claim);
        failures = 0;
      }
      step = 'commit';
      this.metrics.recordPublicationAttempt('commit');
      const onChain = await this.commitment(sha, row.content, claim);
      if (!onChain) return this.lost(claim);
      const now = this.clock.now();
      // Under the registration lock, which a submission takes first: both write the vote's
      // publication row and its tasks, in the opposite order, and deadlocked (an audit's finding).
      const committed = await this.tasks.registering(async (manager) => {
        if (!(await this.repository.recordCommitted(claim, onChain, now, manager))) return false;
        const registration = { block: onChain.blockNumber, at: now, commitSha: onChain.sha };
        await this.tasks.recordNetworkRegistration(row.task_ids, registration, manager);
        return true;
      });
      if (!committed) return this.lost(claim, onChain);
      this.logger.log(
        `vote ${row.version} committed on chain in block ${onChain.blockNumber}: ${onChain.sha}`,
      );
    } catch (error) {
      await this.retryLater(row, claim, step, failures, error as Error);
    }
  }

  /**
   * Our commitment of `sha`: found on chain already (alreadyCommitted), or submitted. Not
   * submitted when the chain's storage says it would refuse it as too soon (a refused commitment
   * is still an extrinsic in a block): thrown as its refusal, with the window read, so that it
   * waits as one. A vote replacing one that waited out the window was submitted at once and sent
   * another refusal, and so did each vote after it until the window opened (a review's finding).
   * Undefined, nothing submitted, when a newer vote replaced the claimed one (or the claim ran
   * out) while the chain was read: its outdated SHA took the epoch's commitment space, and the
   * newest vote waited for the next epoch (an audit's finding). Checked last, one database round
   * trip before the submission.
   */
  private async commitment(
    sha: string,
    content: string,
    claim: Claim,
  ): Promise<Committed | undefined> {
    // Read together: one wait on the node, as the lease counts it (config/publication-timeouts.ts).
    const [onChain, ahead] = await Promise.all([
      this.alreadyCommitted(sha, content),
      this.windowAhead(),
    ]);
    if (onChain) return onChain;
    if (ahead)
      throw new CommitmentRateLimitedError(
        `not submitted: ${TOO_SOON[ahead.rule]}`,
        ahead.rule,
        undefined,
        ahead,
      );
    if (!(await this.repository.holds(claim))) return undefined;
    return { ...(await this.commitments.commit(sha)), sha };
  }

  /** When the chain would refuse our commitment now, the window; undefined when it cannot say. */
  private async windowAhead(): Promise<(CommitmentWindow & { rule: CommitmentRule }) | undefined> {
    try {
      return await this.commitments.windowAhead(this.hotkey);
    } catch (error) {
      this.logger.warn(
        `could not read whether the chain takes a commitment now, submitting: ${(error as Error).message}`,
      );
      return undefined;
    }
  }

  /**
   * Our CommitmentOf when the network has the vote already: it names `sha` (the commitment was
   * submitted, and included, before a restart cut the worker off from recording it), or a commit
   * whose file of ours is `content` (the vote sent again unchanged: its push found the file on
   * the branch's head, which differs from our commitment once another validator pushed). Then
   * nothing is submitted: a commitment is an extrinsic and uses the epoch's commitment space
   * (an audit's finding). Recorded under the SHA on chain.
   */
  private async alreadyCommitted(sha: string, content: string): Promise<Committed | undefined> {
    const current = await this.commitments.of(this.hotkey);
    if (current?.sha === undefined) return undefined;
    if (current.sha !== sha && !(await this.holdsVote(current.sha, content))) return undefined;
    this.logger.log(
      `commitment of ${current.sha} already on chain (block ${current.block}), its file the vote: recorded`,
    );
    return { blockNumber: current.block, blockHash: null, sha: current.sha };
  }

  /**
   * Whether our file at commit `sha` is `content` and the branch has the commit, read from the
   * clone as this attempt's push or check fetched it, never fetched again (the lease counts no
   * second fetch): a commit not there, or not a commit, is taken for another file, and the vote
   * is committed as before. The clone keeps the commits of a history the remote rewrote: one
   * found there alone is no vote to a reader cloning afresh.
   */
  private async holdsVote(sha: string, content: string): Promise<boolean> {
    try {
      const file = await this.gravity!.preferencesAt(this.hotkey, sha, 0);
      if (file.kind !== 'file' || file.text !== content) return false;
      return await this.gravity!.onBranch(sha, { fetched: true });
    } catch (error) {
      this.logger.warn(
        `could not read our file at the commitment on chain (${sha}), committing: ${(error as Error).message}`,
      );
      return false;
    }
  }

  private async retryLater(
    row: PublicationRow,
    claim: Claim,
    step: 'push' | 'commit',
    failures: number,
    error: Error,
  ): Promise<void> {
    const rateLimited = error instanceof CommitmentRateLimitedError;
    this.metrics.recordPublicationFailure(step, rateLimited ? 'rate_limited' : 'error');
    const { retryMs, retryMaxMs } = this.config.publication;
    const doubling = retryDelay(failures, retryMs, retryMaxMs);
    const window = rateLimited ? (error.window ?? (await this.commitmentWindow(error))) : undefined;
    const wait = window ? windowDelay(window, retryMs) : doubling;
    // Read after the chain was asked when: the wait counts from its answer.
    const now = this.clock.now();
    const next = new Date(now.getTime() + wait);
    const reason = rateLimited
      ? `rate limited by the chain: ${error.message}`
      : `${step} failed: ${error.message}`;
    const when = window
      ? ` (the chain takes commitments again from block ${window.acceptedFrom})`
      : '';
    this.logger.warn(
      `vote ${row.version}: ${reason}; next attempt at ${next.toISOString()}${when}`,
    );
    // Rate limited: still pushed, only waiting. A failed commit keeps its SHA (resumed there).
    const state = rateLimited ? 'pushed' : 'failed';
    if (!(await this.repository.recordRetry(claim, state, reason, next, now)))
      await this.lost(claim);
  }

  /**
   * When the chain will take our commitment again, read off its storage after it refused one as
   * too soon; undefined (the doubling wait, as for any failure) when the storage cannot say or
   * the node cannot be read. Each refused commitment is an extrinsic in a block: retrying blindly
   * sent about ten in an interval (docs/decisions.md, "The rate limit.").
   */
  private async commitmentWindow(
    refusal: CommitmentRateLimitedError,
  ): Promise<CommitmentWindow | undefined> {
    try {
      return await this.commitments.commitmentWindow(this.hotkey, refusal.rule, refusal.block);
    } catch (error) {
      this.logger.warn(
        `could not read when the chain takes commitments again: ${(error as Error).message}`,
      );
      return undefined;
    }
  }

  /**
   * This worker's claim no longer holds (a newer vote replaced its vote, or its lease ran out and
   * another replica took over): it says which (and that its vote is on chain, when it was
   * `committed` before the record found it replaced) and lets go; the next claim takes what is
   * due.
   */
  private async lost(claim: Claim, committed?: Committed): Promise<void> {
    const found = await this.repository.find(claim.hotkey);
    const { replaced, message } = lostClaim(claim, found, committed);
    if (replaced) this.logger.log(message);
    else this.logger.warn(message);
    await this.repository.release(claim);
  }
}
