import { Injectable, NotFoundException, OnModuleInit } from '@nestjs/common';
import { Clock } from '../../common/clock/clock';
import { RequestValidationException } from '../../common/errors/validation-error-item';
import { AppConfig } from '../../config/app-config';
import { InjectConfig } from '../../config/config.module';
import { ValidatorIdentity } from '../../network/bittensor/validator-identity';
import { NetworkService } from '../../network/network.service';
import { PublicationService } from '../publication/publication.service';
import { TasksService } from '../tasks/tasks.service';
import { loadDefaultDesirabilities } from './default-desirabilities';
import { aggregateDesirabilities, toLegacyFormat } from './desirability-aggregate';
import { DesirabilityRepository } from './desirability.repository';
import { JobView, ParsedSubmission, toJobView } from './desirability.types';
import { DesirabilitySubmittedDto } from './dto/desirability-submitted.dto';
import { GetDesirabilitiesQueryDto } from './dto/get-desirabilities-query.dto';

const DEFAULT_PAGE = 100;

/**
 * Validators' votes (desirabilities) and the aggregate list miners are directed by: the owner's
 * default list at 30 %, the votes at 70 % split by stake (see desirability-aggregate.ts).
 */
@Injectable()
export class DesirabilityService implements OnModuleInit {
  private ownerJobs: JobView[] = [];

  constructor(
    private readonly repository: DesirabilityRepository,
    private readonly tasks: TasksService,
    private readonly network: NetworkService,
    private readonly clock: Clock,
    private readonly identity: ValidatorIdentity,
    private readonly publication: PublicationService,
    @InjectConfig() private readonly config: AppConfig,
  ) {}

  async onModuleInit(): Promise<void> {
    this.ownerJobs = await loadDefaultDesirabilities(this.config.defaultDesirabilitiesFile);
  }

  /**
   * Makes the submission this validator's current vote: registers its jobs as tasks and
   * replaces the stored vote in one transaction, one registration at a time across replicas,
   * so that a task's params are always those every stored vote names it with. A job that cannot
   * be registered (its id names another task, or an ended one; too many active tasks) is a 422
   * at that job, and nothing is stored.
   */
  async submit(submission: ParsedSubmission): Promise<DesirabilitySubmittedDto> {
    const hotkey = this.identity.hotkey;
    if (submission.jobs.length === 0) {
      const publication = await this.tasks.registering(async (manager) => {
        await this.repository.deleteVote(hotkey, manager);
        await this.tasks.setWeights(hotkey, [], manager);
        return this.publication.enqueue(hotkey, [], manager);
      });
      return {
        status: 'success',
        message: `Vote of ${hotkey} withdrawn; ${this.publication.submittedMessage(publication)}`,
        tasks: [],
        publication,
      };
    }
    const jobs = submission.jobs.map(toJobView);
    const registration = await this.tasks.registering(async (manager) => {
      const outcome = await this.tasks.register(
        hotkey,
        submission.jobs,
        this.config.desirability.maxActiveTasks,
        manager,
      );
      if (outcome.conflicts.length === 0) {
        await this.repository.saveVote(
          hotkey,
          submission.submitted,
          jobs,
          this.clock.now(),
          manager,
        );
        await this.tasks.setWeights(hotkey, submission.jobs, manager);
        // Queued with the vote it publishes: stored together or not at all.
        return { ...outcome, publication: await this.publication.enqueue(hotkey, jobs, manager) };
      }
      return { ...outcome, publication: undefined };
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
    const registered = registration.registered.length;
    const publication = registration.publication!;
    return {
      status: 'success',
      message:
        `Vote of ${hotkey} saved: ${plural(jobs.length, 'job')} (${plural(registered, 'newly registered task')}); ` +
        this.publication.submittedMessage(publication),
      tasks: jobs.map((job) => job.id),
      publication,
    };
  }

  /**
   * A validator's submission as submitted, or one page of the aggregate list (heaviest first)
   * in the requested format, with the aggregate's total number of jobs.
   */
  async get(query: GetDesirabilitiesQueryDto): Promise<{ items: unknown[]; total: number }> {
    if (query.hotkey !== undefined) {
      const submitted = await this.repository.findSubmitted(query.hotkey);
      if (!submitted)
        throw new NotFoundException(`No desirabilities submitted by hotkey ${query.hotkey}`);
      return { items: submitted, total: submitted.length };
    }
    const jobs = await this.aggregate();
    const offset = query.offset ?? 0;
    const page = jobs.slice(offset, offset + (query.limit ?? DEFAULT_PAGE));
    return { items: query.format === 'legacy' ? toLegacyFormat(page) : page, total: jobs.length };
  }

  async aggregate(): Promise<JobView[]> {
    await this.network.whenReady();
    const [votes, activeTaskIds] = await Promise.all([
      this.repository.listVotes(),
      this.tasks.activeTaskIds(),
    ]);
    return aggregateDesirabilities({
      owner: this.ownerJobs,
      votes,
      stakes: this.network.validatorStakes(),
      activeTaskIds,
    });
  }
}

function plural(count: number, noun: string): string {
  return `${count} ${noun}${count === 1 ? '' : 's'}`;
}
