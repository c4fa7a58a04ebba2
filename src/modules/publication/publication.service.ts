import { Injectable, Logger, OnModuleInit } from '@nestjs/common';
import { EntityManager } from 'typeorm';
import { Clock } from '../../common/clock/clock';
import { MetricsService } from '../../common/metrics/metrics.service';
import { AppConfig } from '../../config/app-config';
import { InjectConfig } from '../../config/config.module';
import { ValidatorIdentity } from '../../network/bittensor/validator-identity';
import { TasksService } from '../tasks/tasks.service';
import { PublicationStatusDto } from './dto/publication-status.dto';
import { PublicationRepository } from './publication.repository';
import {
  publicationDisabled,
  PUBLICATION_STATES,
  PublicationRow,
  PublicationState,
  PublishableJob,
  PublishedJob,
  publishableJobs,
  publishedFile,
} from './publication.types';

/** Where a stored vote goes, and which of its jobs stay local (see publishableJobs). */
export interface QueuedVote {
  state: Extract<PublicationState, 'pending' | 'disabled'>;
  keptLocal: string[];
}

/**
 * Publishing this validator's vote to the network, as the subnet's validators do: the vote's
 * file pushed to the Gravity repository, its commit SHA committed on chain. The vote is queued
 * in the transaction that stores it; PublicationWorker does the rest in the background.
 */
@Injectable()
export class PublicationService implements OnModuleInit {
  private readonly logger = new Logger(PublicationService.name);
  /** Why votes are not published (unset: they are). */
  readonly disabledReason: string | undefined;
  /** Disabled by a setting that cannot work (said as a warning), not by one left unset. */
  private readonly misconfigured: boolean;

  constructor(
    private readonly repository: PublicationRepository,
    private readonly identity: ValidatorIdentity,
    private readonly tasks: TasksService,
    private readonly clock: Clock,
    private readonly metrics: MetricsService,
    @InjectConfig() private readonly config: AppConfig,
  ) {
    const disabled = publicationDisabled(config);
    this.disabledReason = disabled?.reason;
    this.misconfigured = disabled?.misconfigured ?? false;
  }

  onModuleInit(): void {
    if (this.disabledReason)
      this.logger[this.misconfigured ? 'warn' : 'log'](
        `Vote publication disabled: ${this.disabledReason}; votes stay local to this gateway`,
      );
    else
      this.logger.log(
        `Votes of ${this.identity.hotkey} are published to ${this.repositoryName()} and committed on chain (netuid ${this.config.netuid})`,
      );
    this.metrics.gauge(
      'desirability_publication',
      'This validator’s vote publication by state (1 for the current one): disabled, none, pending, pushed, committed, failed',
      ['state'],
      async () => {
        const current = (await this.status()).state;
        return PUBLICATION_STATES.map((state) => ({
          labels: { state },
          value: state === current ? 1 : 0,
        }));
      },
    );
  }

  get enabled(): boolean {
    return this.disabledReason === undefined;
  }

  /**
   * Queues the vote (normalized jobs; none withdraws it), made at `votedAt` (now), for publication
   * inside the caller's transaction, replacing any vote not yet published: its jobs with a label
   * whose tasks have not ended (publishedJobs).
   * Answers what the caller is told, with the ids of the jobs left out of the published file.
   */
  async enqueue(
    hotkey: string,
    jobs: readonly PublishedJob[],
    manager: EntityManager,
    votedAt?: Date,
  ): Promise<QueuedVote> {
    if (!this.enabled) return { state: 'disabled', keptLocal: [] };
    const { published, keptLocal } = await this.publishedJobs(jobs, manager);
    await this.queue(hotkey, published, votedAt, manager);
    return { state: 'pending', keptLocal };
  }

  /**
   * The jobs of a vote its published file holds, and the ids of those kept local (keyword-only,
   * publishableJobs). A job whose task has ended is in neither: the subnet's readers weigh every
   * job of the file by our stake, and would go on steering miners to a task that collects
   * nothing here and weighs 0 in the local aggregate (an audit's finding). The other jobs keep
   * their stored weights, which then sum to less than 1, as with keyword-only jobs left out.
   * Inside the caller's transaction, if given.
   */
  async publishedJobs<J extends PublishableJob>(
    jobs: readonly J[],
    manager?: EntityManager,
  ): Promise<{ published: J[]; keptLocal: string[] }> {
    const { published, keptLocal } = publishableJobs(jobs);
    const ended = await this.tasks.endedTaskIds(
      published.map((job) => job.id),
      manager,
    );
    return { published: published.filter((job) => !ended.has(job.id)), keptLocal };
  }

  private async queue(
    hotkey: string,
    published: readonly PublishedJob[],
    votedAt: Date | undefined,
    manager: EntityManager,
  ): Promise<void> {
    const now = this.clock.now();
    await this.repository.enqueue(
      hotkey,
      publishedFile(published),
      published.map((job) => job.id),
      votedAt ?? now,
      now,
      this.target(),
      manager,
    );
  }

  /**
   * At start, inside the caller's transaction: a publication whose progress was made for another
   * target (GRAVITY_REPO_URL, GRAVITY_BRANCH or NETUID changed since) starts afresh for this one,
   * due now, from the push. Its SHA names a commit of the old repository or a commitment on the
   * old subnet, and its failures and their wait were the old target's: an operator who corrected
   * the repository waited up to PUBLICATION_RETRY_MAX_MS, shown the old one's error. A row from
   * before targets were recorded only has this one recorded: what it was made for is unknown.
   * Answers the row as it was, when restarted (for the log).
   */
  async restartForNewTarget(
    hotkey: string,
    manager: EntityManager,
  ): Promise<PublicationRow | undefined> {
    if (!this.enabled) return undefined;
    const row = await this.repository.find(hotkey, manager);
    const target = this.target();
    if (!row || row.target === target) return undefined;
    if (row.target === null) {
      await this.repository.recordTarget(hotkey, target, manager);
      return undefined;
    }
    await this.repository.restart(hotkey, target, this.clock.now(), manager);
    return row;
  }

  /** Where votes go: the Gravity repository and branch, and the subnet committed on. */
  target(): string {
    return `${this.repositoryName()} on netuid ${this.config.netuid}`;
  }

  /**
   * Queues the stored vote (undefined: none, or withdrawn) unless the publication row holds its
   * file already, inside the caller's transaction, under the registration lock every vote is
   * stored under. The file is built as now (publishedJobs), so the row misses it when the vote
   * was stored while publication was disabled (no row, or the row of an older vote; a
   * withdrawal: a row still holding a vote), or when a task of the vote has ended since it was
   * queued. True when queued.
   */
  async enqueueUnpublished(
    hotkey: string,
    vote: { jobs: readonly PublishedJob[]; votedAt: Date } | undefined,
    manager: EntityManager,
  ): Promise<boolean> {
    if (!this.enabled) return false;
    const row = await this.repository.find(hotkey, manager);
    const { published } = await this.publishedJobs(vote?.jobs ?? [], manager);
    if (row ? row.content === publishedFile(published) : vote === undefined) return false;
    await this.queue(hotkey, published, vote?.votedAt, manager);
    return true;
  }

  /**
   * Whether the vote queued or published names a task that has ended since: the stored vote is
   * then queued again without it (StoredVotePublication, after each lifecycle pass). A look
   * without the registration lock, so that a pass takes it only when there is something to do;
   * enqueueUnpublished decides under it.
   */
  async namesEndedTask(hotkey: string): Promise<boolean> {
    if (!this.enabled) return false;
    const row = await this.repository.find(hotkey);
    return row !== undefined && (await this.tasks.endedTaskIds(row.task_ids)).size > 0;
  }

  /** A sentence for the caller of set_desirabilities about where the vote goes. */
  submittedMessage({ state, keptLocal }: QueuedVote): string {
    if (state === 'disabled')
      return `local only, not published to the network (${this.disabledReason})`;
    const pending = `publication to the network pending (GET /api/v1/desirabilities/publication)`;
    if (keptLocal.length === 0) return pending;
    return (
      `${pending}; keyword-only jobs kept here but not published, as the subnet's validators ` +
      `cannot read a job without a label: ${keptLocal.join(', ')}`
    );
  }

  async status(): Promise<PublicationStatusDto> {
    const hotkey = this.identity.hotkey;
    if (!this.enabled)
      return {
        state: 'disabled',
        hotkey,
        message: `Votes stay local to this gateway: ${this.disabledReason}`,
        attempts: 0,
      };
    const row = await this.repository.find(hotkey);
    const repository = this.repositoryName();
    if (!row)
      return {
        state: 'none',
        hotkey,
        repository,
        message: 'No vote submitted yet',
        attempts: 0,
      };
    return toStatusDto(row, repository, this.clock.now());
  }

  private repositoryName(): string {
    const { repoUrl, branch } = this.config.gravity;
    return repoUrl ? `${repoUrl}#${branch}` : '';
  }
}

/** Why publication is off, or undefined when both the repository and the chain are set. */
function toStatusDto(row: PublicationRow, repository: string, now: Date): PublicationStatusDto {
  const sha = row.commit_sha?.trim();
  // A replica's attempt under way, or the claim of one that died mid-attempt: no other replica
  // takes the vote before it runs out, and `next_attempt_at` may be past meanwhile (an audit's
  // finding: nothing said why a due vote did not move).
  const claimedUntil =
    row.state !== 'committed' && row.claimed_until && row.claimed_until > now
      ? row.claimed_until.toISOString()
      : undefined;
  const claim = claimedUntil
    ? `; an attempt is under way: a replica holds the vote until ${claimedUntil} (PUBLICATION_LEASE_MS), and no other replica takes it over before`
    : '';
  const messages: Record<PublicationRow['state'], string> = {
    pending: 'The vote is waiting to be pushed to the Gravity repository',
    pushed: `The vote is in the Gravity repository at ${sha}; its commitment on chain is next`,
    committed: `The vote is on the network: commit ${sha} committed on chain in block ${row.block_number}`,
    failed: `The last attempt failed; retried at ${row.next_attempt_at.toISOString()}`,
  };
  return {
    state: row.state,
    hotkey: row.hotkey,
    message: `${messages[row.state]}${claim}`,
    repository,
    voted_at: row.voted_at.toISOString(),
    ...(sha ? { commit_sha: sha } : {}),
    ...(row.pushed_at ? { pushed_at: row.pushed_at.toISOString() } : {}),
    ...(row.block_number !== null ? { block_number: Number(row.block_number) } : {}),
    ...(row.block_hash ? { block_hash: row.block_hash } : {}),
    ...(row.committed_at ? { committed_at: row.committed_at.toISOString() } : {}),
    ...(row.last_error ? { last_error: row.last_error } : {}),
    ...(row.state !== 'committed' ? { next_attempt_at: row.next_attempt_at.toISOString() } : {}),
    ...(claimedUntil ? { claimed_until: claimedUntil } : {}),
    attempts: row.attempts,
  };
}
