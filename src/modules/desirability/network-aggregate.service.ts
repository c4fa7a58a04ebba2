import {
  BeforeApplicationShutdown,
  Injectable,
  Logger,
  OnApplicationBootstrap,
  OnModuleDestroy,
} from '@nestjs/common';
import { Clock } from '../../common/clock/clock';
import { JobRunner } from '../../common/jobs/job-runner';
import { PeriodicJob } from '../../common/jobs/periodic-job';
import { AppConfig } from '../../config/app-config';
import { InjectConfig } from '../../config/config.module';
import { ChainCommitmentsService } from '../../network/chain/chain-commitments.service';
import { NetworkService } from '../../network/network.service';
import { stakeShares, unroundedAggregate, Vote } from './desirability-aggregate';
import { NetworkVotesService } from './network-votes.service';
import {
  CountedValidator,
  NetworkVotesRepository,
  SkippedValidator,
  StoredAggregateJobs,
  StoredAggregateStatus,
  StoredNetworkAggregate,
} from './network-votes.repository';
import { OwnerDesirabilities } from './owner-desirabilities';

export const NETWORK_AGGREGATE_JOB = 'network-desirabilities';

/** The outcome of the latest attempt to compute the aggregate, by any replica. */
export interface AggregateAttempt {
  ok: boolean;
  at: Date;
  error?: string;
}

/**
 * The network's aggregate desirability list, rebuilt every DESIRABILITY_SYNC_INTERVAL by one
 * replica: every commitment under NETUID, the vote at each committed SHA, the stakes of the
 * validators with a permit (the metagraph), and the owner's default list. Kept in Postgres: a
 * read that fails (node or repository out of reach) leaves the last good aggregate in service,
 * and does not count for the interval: it spends no miner's call budget (a chain node and a git
 * repository), so it is retried soon (PeriodicJob's backoff), not an interval later. How the
 * latest attempt ended is its `job_runs` row's, which every replica and a restarted one read.
 */
@Injectable()
export class NetworkAggregateService
  implements OnApplicationBootstrap, OnModuleDestroy, BeforeApplicationShutdown
{
  private readonly logger = new Logger(NetworkAggregateService.name);
  /** What the last line said of the validators without a vote and the entries left out. */
  private lastSkipped: string | undefined;
  private readonly job: PeriodicJob<{ counted: number; skipped: number }>;
  private readonly jobsRead = new KeptWhileUnchanged(() => this.repository.findAggregateJobs());
  private readonly statusRead = new KeptWhileUnchanged(() => this.repository.findAggregateStatus());

  constructor(
    private readonly votes: NetworkVotesService,
    private readonly commitments: ChainCommitmentsService,
    private readonly repository: NetworkVotesRepository,
    private readonly network: NetworkService,
    private readonly owner: OwnerDesirabilities,
    private readonly clock: Clock,
    private readonly jobs: JobRunner,
    @InjectConfig() private readonly config: AppConfig,
  ) {
    this.job = new PeriodicJob(
      jobs,
      NETWORK_AGGREGATE_JOB,
      config.desirability.syncIntervalMs,
      () => this.compute(),
      this.logger,
      (ended) => !('error' in ended),
    );
  }

  onApplicationBootstrap(): void {
    if (this.votes.enabled) this.job.start(this.network.whenReady());
  }

  onModuleDestroy(): void {
    this.job.stop();
  }

  beforeApplicationShutdown(): Promise<void> {
    return this.job.settled();
  }

  /** Runs the job now unless another replica runs it or ran it within the interval (tests). */
  runIfDue(): ReturnType<PeriodicJob<unknown>['runIfDue']> {
    return this.job.runIfDue();
  }

  /**
   * How the latest attempt that ended went (undefined before any): from the job's row, so that
   * it survives a restart and reads the same on every replica. A failed one's `details` hold its
   * error, kept while the next attempt runs.
   */
  async lastAttempt(): Promise<AggregateAttempt | undefined> {
    const run = await this.jobs.lastRun(NETWORK_AGGREGATE_JOB);
    if (!run?.finishedAt) return undefined;
    const { error } = run.details;
    return typeof error === 'string'
      ? { ok: false, at: run.finishedAt, error }
      : { ok: true, at: run.finishedAt };
  }

  /**
   * The stored aggregate's jobs. Each call reads the row's version alone; the jobs are read
   * again only once another aggregate was stored: read and parsed at every request, a 100,000-job
   * aggregate (15 MB of jsonb) held the event loop 0.6 s per `get_desirabilities` (an audit's
   * finding).
   */
  async storedJobs(): Promise<StoredAggregateJobs | undefined> {
    const version = await this.repository.aggregateVersion();
    return version === undefined ? undefined : this.jobsRead.at(version);
  }

  /** The stored aggregate without its jobs, read as `storedJobs` reads them. */
  async storedStatus(): Promise<StoredAggregateStatus | undefined> {
    const version = await this.repository.aggregateVersion();
    return version === undefined ? undefined : this.statusRead.at(version);
  }

  /** Reads every vote and stores the new aggregate; throws (storing nothing) if a read fails. */
  private async compute(): Promise<{ counted: number; skipped: number }> {
    const aggregate = await this.read(Date.now());
    await this.repository.saveAggregate(aggregate);
    const { size, skipped, counts } = summary(aggregate);
    // The list, often the same at every run, only when it changed (a log audit: a line of
    // several KB every 20 minutes on subnet 13); the endpoint has it in full.
    this.logger.log(
      skipped === ''
        ? size
        : skipped === this.lastSkipped
          ? `${size}; the rest as in the last line: ${counts} (GET /api/v1/desirabilities/network)`
          : `${size}; ${skipped}`,
    );
    this.lastSkipped = skipped;
    return { counted: aggregate.validators.length, skipped: aggregate.skipped.length };
  }

  private async read(started: number): Promise<StoredNetworkAggregate> {
    const commitments = await this.commitments.all();
    const stakes = this.network.validatorStakes();
    const skipped: SkippedValidator[] = [];
    const voted: { vote: Vote; sha: string; block: number; notes: string[] }[] = [];
    for (const commitment of commitments) {
      const { hotkey, block } = commitment;
      if (commitment.sha === undefined) {
        skipped.push({ hotkey, block, reason: commitment.problem });
        continue;
      }
      const { sha } = commitment;
      if (!stakes.has(hotkey)) {
        const minStake = this.config.network.validatorMinStake.toLocaleString('en');
        const reason = `not a validator on the subnet (a validator permit and ${minStake} α of stake weight)`;
        skipped.push({ hotkey, sha, block, reason });
        continue;
      }
      // One fetch of the repository per run at most: later unknown commits are not in it either.
      const vote = await this.votes.voteAt(hotkey, sha, started);
      if (!vote.ok) skipped.push({ hotkey, sha, block, reason: vote.reason });
      else if (vote.submitted.length === 0)
        skipped.push({ hotkey, sha, block, reason: 'the vote is withdrawn (an empty list)' });
      // A file the subnet's reader counts takes its validator's share even when none of its
      // jobs is one we count (a youtube vote): that share is not handed to the others.
      else voted.push({ vote: { hotkey, jobs: vote.jobs }, sha, block, notes: vote.notes });
    }
    const shares = stakeShares(
      voted.map(({ vote }) => vote.hotkey),
      stakes,
    );
    const validators: CountedValidator[] = voted.map(({ vote, sha, block, notes }) => ({
      hotkey: vote.hotkey,
      stake: stakes.get(vote.hotkey) ?? null,
      share: Number((shares.get(vote.hotkey) ?? 0).toPrecision(12)),
      sha,
      block,
      jobs: vote.jobs.length,
      ...(notes.length > 0 ? { notes } : {}),
    }));
    // Stored unrounded: listed rounded, and the legacy format adds a label up from these.
    const jobs = unroundedAggregate({
      owner: this.owner.jobs,
      votes: voted.map(({ vote }) => vote),
      stakes,
    });
    const metagraph = await this.network.metagraphStatus();
    return {
      computedAt: this.clock.now(),
      block: metagraph.stored?.block ?? null,
      jobs,
      validators,
      skipped,
    };
  }
}

/**
 * The job's log line in parts: the aggregate's size; the commitments that are no vote and why
 * with the entries left out of counted files (the first three of each validator), empty when
 * there are none; and that second part counted, for a line that repeats it.
 */
function summary(aggregate: StoredNetworkAggregate): {
  size: string;
  skipped: string;
  counts: string;
} {
  const { jobs, validators, skipped } = aggregate;
  const size = `network desirabilities: ${jobs.length} jobs from ${validators.length} validators`;
  const parts: string[] = [];
  const counts: string[] = [];
  if (skipped.length > 0) {
    counts.push(`no vote from ${skipped.length}`);
    parts.push(
      `${counts[0]}: ` + skipped.map(({ hotkey, reason }) => `${hotkey}: ${reason}`).join('; '),
    );
  }
  const noted = validators.flatMap(({ hotkey, notes = [] }) =>
    notes.length === 0
      ? []
      : [
          `${hotkey}: ${notes.slice(0, 3).join('; ')}` +
            (notes.length > 3 ? ` (and ${notes.length - 3} more)` : ''),
        ],
  );
  if (noted.length > 0) {
    counts.push(`entries left out from ${noted.length}`);
    parts.push(`entries left out: ${noted.join('; ')}`);
  }
  return { size, skipped: parts.join('; '), counts: counts.join(', ') };
}

/**
 * A read of the stored aggregate, kept while its row's version stays what it was read at;
 * callers asking for one version at once share one read. A failed read is not kept.
 */
class KeptWhileUnchanged<T> {
  private version: string | undefined;
  private read: Promise<T | undefined> | undefined;

  constructor(private readonly load: () => Promise<T | undefined>) {}

  at(version: string): Promise<T | undefined> {
    if (this.read && this.version === version) return this.read;
    const read = this.load().catch((error: unknown) => {
      if (this.read === read) this.read = undefined;
      throw error;
    });
    this.version = version;
    this.read = read;
    return read;
  }
}
