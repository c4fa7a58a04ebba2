import { Injectable, NotFoundException } from '@nestjs/common';
import { stillWanted } from '../../common/http/client-gone';
import { RetryLaterException } from '../../common/errors/retry-later';
import { EntityManager } from 'typeorm';
import { Clock } from '../../common/clock/clock';
import { RequestValidationException } from '../../common/errors/validation-error-item';
import { isRecord } from '../../common/is-record';
import { DEFAULT_PAGE_LIMIT } from '../../common/validation/page-limit';
import { AppConfig } from '../../config/app-config';
import { InjectConfig } from '../../config/config.module';
import { canonicalAddress } from '../../network/bittensor/keypair';
import { ValidatorIdentity } from '../../network/bittensor/validator-identity';
import { NetworkService } from '../../network/network.service';
import { PublicationService } from '../publication/publication.service';
import { publishedFileProblem } from '../publication/publication.types';
import { TasksService, windowAfterLifeNote } from '../tasks/tasks.service';
import {
  aggregateVersion,
  LegacyLabel,
  legacyLabels,
  roundedJobs,
  toLegacyFormat,
  unroundedAggregate,
} from './desirability-aggregate';
import { DesirabilityRepository } from './desirability.repository';
import { JobView, ParsedSubmission, toJobView, WeightedJob } from './desirability.types';
import { legacyIdClashes, withCurrentLegacyIds } from './legacy-job-id';
import { DesirabilitySubmittedDto } from './dto/desirability-submitted.dto';
import { SubmittedItem } from './dto/desirability-request.dto';
import { GetDesirabilitiesQueryDto } from './dto/get-desirabilities-query.dto';
import { NetworkDesirabilitiesDto } from './dto/network-desirabilities.dto';
import { NetworkAggregateService } from './network-aggregate.service';
import { sameVote } from './network-vote';
import { NetworkVotesService } from './network-votes.service';
import { OwnerDesirabilities } from './owner-desirabilities';
import { AGGREGATE_NOT_COMPUTED, AGGREGATE_PENDING, noSubmission } from './desirability-errors';
import { plural } from '../../common/plural';

/** An answer of get_desirabilities: one page, the total, and headers saying where it comes from. */
export interface DesirabilitiesAnswer {
  items: SubmittedItem[];
  total: number;
  headers: Record<string, string>;
}

/**
 * Validators' votes (desirabilities) and the aggregate list miners are directed by: the owner's
 * default list at 30 %, the votes at 70 % split by stake (see desirability-aggregate.ts). With
 * a chain and a Gravity repository configured, votes and the aggregate are the network's
 * (NetworkVotesService, NetworkAggregateService); without, the votes stored here.
 */
@Injectable()
export class DesirabilityService {
  /**
   * An aggregate's jobs as listed (rounded), its legacy labels and its version, made from its
   * unrounded jobs, for as long as those are kept (the network's).
   */
  private readonly listedOfJobs = new WeakMap<readonly JobView[], JobView[]>();
  private readonly labelsOfJobs = new WeakMap<readonly JobView[], LegacyLabel[]>();
  private readonly versionOfJobs = new WeakMap<readonly JobView[], string>();

  constructor(
    private readonly repository: DesirabilityRepository,
    private readonly tasks: TasksService,
    private readonly network: NetworkService,
    private readonly clock: Clock,
    private readonly identity: ValidatorIdentity,
    private readonly publication: PublicationService,
    private readonly owner: OwnerDesirabilities,
    private readonly networkVotes: NetworkVotesService,
    private readonly networkAggregate: NetworkAggregateService,
    @InjectConfig() private readonly config: AppConfig,
  ) {}

  /**
   * Makes the submission this validator's current vote: registers its jobs as tasks and
   * replaces the stored vote in one transaction, one registration at a time across replicas,
   * so that a task's params are always those every stored vote names it with. A legacy label
   * joins its running task, or runs again under a new id once that task has ended (see
   * legacy-job-id.ts). A job that cannot be registered (its id names another task, or an ended
   * one; too many active tasks) is a 422 at that job, and nothing is stored.
   */
  async submit(
    submission: ParsedSubmission,
    gone?: AbortSignal,
  ): Promise<DesirabilitySubmittedDto> {
    const hotkey = this.identity.hotkey;
    // Last before the commit: a vote whose client left is not stored (stillWanted), so that one
    // given up on cannot land after the newer vote its client sent next, and replace it.
    const wanted = () => stillWanted(gone, `the vote of ${hotkey}`);
    if (submission.jobs.length === 0) {
      const publication = await this.tasks.registering(async (manager) => {
        const previous = await this.repository.findVote(hotkey, manager);
        await this.repository.deleteVote(hotkey, manager);
        await this.reweigh(previous?.jobs ?? [], manager);
        const enqueued = await this.publication.enqueue(hotkey, [], manager);
        wanted();
        return enqueued;
      });
      return {
        status: 'success',
        message: `Vote of ${hotkey} withdrawn; ${this.publication.submittedMessage(publication)}`,
        tasks: [],
        publication: publication.state,
      };
    }
    const registration = await this.tasks.registering(async (manager) => {
      // One instant for the whole registration: a task is running for both steps or for neither.
      const now = this.clock.now();
      const weighted = await this.resolveLegacyIds(submission.jobs, now, manager);
      const jobs = weighted.map(toJobView);
      // Refused whether or not publication is on: a vote stored while it is off is published
      // once it is on (StoredVotePublication), and would then count for nothing.
      const oversized = publishedFileProblem(jobs);
      // Found before registering, which would blame whichever of the two came later.
      const found = [
        ...(oversized ? [{ index: null, message: oversized }] : []),
        ...legacyIdClashes(weighted),
      ];
      const outcome = await this.tasks.register(
        hotkey,
        weighted,
        this.config.desirability.maxActiveTasks,
        manager,
        now,
        found,
      );
      if (outcome.conflicts.length === 0) {
        const previous = await this.repository.findVote(hotkey, manager);
        await this.repository.saveVote(hotkey, submission.submitted, jobs, now, manager);
        await this.reweigh([...(previous?.jobs ?? []), ...jobs], manager);
        // Queued with the vote it publishes: stored together or not at all.
        const publication = await this.publication.enqueue(hotkey, jobs, manager);
        wanted();
        return { ...outcome, jobs, publication };
      }
      return { ...outcome, jobs, publication: undefined };
    });
    if (registration.conflicts.length > 0) {
      throw new RequestValidationException(
        registration.conflicts.map((conflict) => ({
          loc:
            conflict.index === null ? ['body', 'desirabilities'] : submission.locs[conflict.index],
          msg: `Value error, ${conflict.message}`,
          type: 'value_error',
        })),
      );
    }
    const jobs = registration.jobs;
    const registered = registration.registered.length;
    const publication = registration.publication!;
    return {
      status: 'success',
      message:
        `Vote of ${hotkey} saved: ${plural(jobs.length, 'job')} (${plural(registered, 'newly registered task')}); ` +
        this.publication.submittedMessage(publication) +
        windowAfterLifeNote(registration.windowAfterLife ?? []) +
        this.standingNote(),
      tasks: jobs.map((job) => job.id),
      publication: publication.state,
      ...(publication.keptLocal.length > 0 ? { not_published: publication.keptLocal } : {}),
    };
  }

  /**
   * Said beside a vote saved while this gateway's hotkey is no validator: the network counts
   * only validators' votes, by their stake. Saved all the same (the standing may be a metagraph
   * behind, and the vote counts once it is one), but an answer of plain success hid it: the vote
   * then had the whole of the local aggregate's 70 % (an identity audit).
   */
  private standingNote(): string {
    const check = this.network.hotkeyCheck();
    if (!check || check.standing === 'validator') return '';
    return (
      `; this gateway's hotkey is not a validator on netuid ${this.config.netuid} now ` +
      `(${check.standing}, see GET /api/v1/monitoring/system-status): the network counts ` +
      "validators' votes only"
    );
  }

  /**
   * Gives the tasks of a hotkey's previous vote and of the one just stored in its place (none,
   * when withdrawn) the weight the current votes give them, every hotkey's: the largest any vote
   * gives the task, 0 when none names it (docs/decisions.md, "Collection within a budget").
   * Votes are stored under the registration lock, so the votes read are those in force.
   */
  private async reweigh(jobs: readonly { id: string }[], manager: EntityManager): Promise<void> {
    const ids = [...new Set(jobs.map((job) => job.id))];
    await this.tasks.setWeights(await this.repository.taskWeights(ids, manager), manager);
  }

  /**
   * Legacy labels under their current generation's id, read under the registration lock, the
   * labels' tasks locked against the compiler until the vote is stored (a task it claimed
   * between this read and the registration would be joined, then refused as ended).
   */
  private async resolveLegacyIds(
    jobs: readonly WeightedJob[],
    now: Date,
    manager: EntityManager,
  ): Promise<WeightedJob[]> {
    const labels = jobs.flatMap((job) =>
      job.legacy && job.label !== null ? [{ platform: job.platform, label: job.label }] : [],
    );
    if (labels.length === 0) return [...jobs];
    const tasks = await this.tasks.findLabelTasks(labels, manager);
    const known = new Set(tasks.map((task) => task.id));
    // Ids given to the submission's other jobs, and held by tasks of other params (given by
    // hand): a new generation skips them. Found a round at a time; nearly always none.
    const taken = new Set(jobs.filter((job) => !job.legacy).map((job) => job.id));
    for (;;) {
      const resolved = withCurrentLegacyIds(jobs, tasks, now, taken);
      const fresh = resolved.filter((job) => job.legacy && !known.has(job.id));
      const held = await this.tasks.findIds(
        fresh.map((job) => job.id),
        manager,
      );
      if (held.length === 0) return resolved;
      for (const id of held) taken.add(id);
    }
  }

  /**
   * A validator's submission as submitted, or one page of the aggregate list (heaviest first)
   * in the requested format, with the aggregate's total number of jobs.
   */
  async get(query: GetDesirabilitiesQueryDto): Promise<DesirabilitiesAnswer> {
    const network = this.networkVotes.enabled;
    if (query.hotkey !== undefined) {
      // Any SS58 prefix names the key; votes, Gravity files and their cache go by prefix 42.
      const hotkey = canonicalAddress(query.hotkey);
      return network ? this.networkSubmission(hotkey) : this.localSubmission(hotkey);
    }
    // Unrounded: a label of the legacy format adds up its jobs' weights before rounding.
    const { jobs: unrounded, headers: sourceHeaders } = network
      ? await this.networkAggregateJobs()
      : { jobs: await this.localAggregate(), headers: { 'X-Aggregate-Source': 'local' } };
    const headers = {
      ...sourceHeaders,
      'X-Aggregate-Version': keptFor(this.versionOfJobs, unrounded, aggregateVersion),
    };
    const offset = query.offset ?? 0;
    const end = offset + (query.limit ?? DEFAULT_PAGE_LIMIT);
    if (query.format !== 'legacy') {
      const jobs = keptFor(this.listedOfJobs, unrounded, roundedJobs);
      return { items: jobs.slice(offset, end), total: jobs.length, headers };
    }
    // The legacy format's entries are labels: pages and the total count them.
    const labels = keptFor(this.labelsOfJobs, unrounded, legacyLabels);
    return { items: toLegacyFormat(labels.slice(offset, end)), total: labels.length, headers };
  }

  /** How the aggregate is made: its source, age, and which validators count and why not. */
  async networkStatus(): Promise<NetworkDesirabilitiesDto> {
    const syncInterval = this.config.desirability.syncIntervalMs / 1000;
    if (!this.networkVotes.enabled)
      return { source: 'local', sync_interval_seconds: syncInterval, validators: [], skipped: [] };
    const [stored, attempt] = await Promise.all([
      this.networkAggregate.storedStatus(),
      this.networkAggregate.lastAttempt(),
    ]);
    return {
      source: 'network',
      ...(stored
        ? {
            computed_at: stored.computedAt.toISOString(),
            age_seconds: this.ageSeconds(stored.computedAt),
            ...(stored.block !== null ? { block: stored.block } : {}),
          }
        : {}),
      sync_interval_seconds: syncInterval,
      validators: stored?.validators ?? [],
      skipped: stored?.skipped ?? [],
      ...(attempt
        ? {
            last_attempt: {
              ok: attempt.ok,
              at: attempt.at.toISOString(),
              ...(attempt.error ? { error: attempt.error } : {}),
            },
          }
        : {}),
    };
  }

  private async localSubmission(hotkey: string): Promise<DesirabilitiesAnswer> {
    const submitted = await this.repository.findSubmitted(hotkey);
    if (!submitted) throw new NotFoundException(noSubmission(hotkey));
    return { items: submitted, total: jobCount(submitted), headers: {} };
  }

  /**
   * The validator's file at its committed SHA; for our own hotkey, whether it is our latest vote.
   */
  private async networkSubmission(hotkey: string): Promise<DesirabilitiesAnswer> {
    const submission = await this.networkVotes.submissionOf(hotkey);
    const headers: Record<string, string> = {
      'X-Commitment-Sha': submission.sha,
      'X-Commitment-Block': String(submission.block),
    };
    if (hotkey === this.identity.hotkey) {
      // Only the jobs a vote publishes now are on the network (publishedJobs).
      const stored = (await this.repository.findJobs(hotkey)) ?? [];
      const local = (await this.publication.publishedJobs(stored)).published;
      headers['X-Vote-Published'] = String(sameVote(local, submission.vote.jobs));
    }
    return { items: submission.submitted, total: jobCount(submission.submitted), headers };
  }

  private async networkAggregateJobs(): Promise<{
    jobs: JobView[];
    headers: Record<string, string>;
  }> {
    const stored = await this.networkAggregate.storedJobs();
    if (!stored) {
      const failure = (await this.networkAggregate.lastAttempt())?.error;
      // The job's first read, or its retry after a failed one, comes within seconds.
      throw new RetryLaterException(
        failure ? `${AGGREGATE_NOT_COMPUTED}: ${failure}` : AGGREGATE_PENDING,
      );
    }
    return {
      jobs: stored.jobs,
      headers: {
        'X-Aggregate-Source': 'network',
        'X-Aggregate-Computed-At': stored.computedAt.toISOString(),
        Age: String(this.ageSeconds(stored.computedAt)),
      },
    };
  }

  private async localAggregate(): Promise<JobView[]> {
    await this.network.whenReady();
    const [votes, activeTaskIds] = await Promise.all([
      this.repository.listVotes(),
      this.tasks.activeTaskIds(),
    ]);
    return unroundedAggregate({
      owner: this.owner.jobs,
      votes,
      stakes: this.network.validatorStakes(),
      activeTaskIds,
    });
  }

  private ageSeconds(since: Date): number {
    return Math.max(0, Math.floor((this.clock.now().getTime() - since.getTime()) / 1000));
  }
}

/**
 * The jobs of a submission as written: an entry of the jobs format is one, a legacy entry one
 * per label (as the submission rules count them; it was one per entry, found by an audit).
 */
function jobCount(entries: readonly SubmittedItem[]): number {
  return entries.reduce((count, entry) => {
    const labels = (entry as { label_weights?: unknown }).label_weights;
    return count + (isRecord(labels) ? Object.keys(labels).length : 1);
  }, 0);
}

/**
 * What `make` gives for these jobs, made once while they are kept. The network aggregate's jobs
 * are kept while no other is stored (NetworkAggregateService), and so are their rounded list and
 * their labels: made at every request, a 100,000-job aggregate's labels took longer than
 * reading the jobs had.
 */
function keptFor<T>(
  kept: WeakMap<readonly JobView[], T>,
  jobs: readonly JobView[],
  make: (jobs: readonly JobView[]) => T,
): T {
  let value = kept.get(jobs);
  if (value === undefined) kept.set(jobs, (value = make(jobs)));
  return value;
}
