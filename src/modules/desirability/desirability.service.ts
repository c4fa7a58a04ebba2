import { Injectable, NotFoundException, OnModuleInit } from '@nestjs/common';
import { Clock } from '../../common/clock/clock';
import { RequestValidationException } from '../../common/errors/validation-error-item';
import { AppConfig } from '../../config/app-config';
import { InjectConfig } from '../../config/config.module';
import { ValidatorIdentity } from '../../network/bittensor/validator-identity';
import { NetworkService } from '../../network/network.service';
import { TasksService } from '../tasks/tasks.service';
import { loadDefaultDesirabilities } from './default-desirabilities';
import { aggregateDesirabilities, toLegacyFormat } from './desirability-aggregate';
import { DesirabilityRepository } from './desirability.repository';
import { JobView, ParsedSubmission, toJobView } from './desirability.types';
import { DesirabilitySubmittedDto } from './dto/desirability-submitted.dto';
import { GetDesirabilitiesQueryDto } from './dto/get-desirabilities-query.dto';

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
    @InjectConfig() private readonly config: AppConfig,
  ) {}

  async onModuleInit(): Promise<void> {
    this.ownerJobs = await loadDefaultDesirabilities(this.config.defaultDesirabilitiesFile);
  }

  /**
   * Makes the submission this validator's current vote: registers its jobs as tasks, then
   * replaces the stored vote. A job that cannot be registered (its id names another task, or
   * an ended one) is a 422 at that job, and nothing is stored.
   */
  async submit(submission: ParsedSubmission): Promise<DesirabilitySubmittedDto> {
    const hotkey = this.identity.hotkey;
    if (submission.jobs.length === 0) {
      await this.repository.deleteVote(hotkey);
      return { status: 'success', message: `Vote of ${hotkey} withdrawn`, tasks: [] };
    }
    const registration = await this.tasks.register(hotkey, submission.jobs);
    if (registration.conflicts.length > 0) {
      throw new RequestValidationException(
        registration.conflicts.map((conflict) => ({
          loc: submission.locs[conflict.index],
          msg: `Value error, ${conflict.message}`,
          type: 'value_error',
        })),
      );
    }
    const jobs = submission.jobs.map(toJobView);
    await this.repository.saveVote(hotkey, submission.submitted, jobs, this.clock.now());
    const registered = registration.registered.length;
    return {
      status: 'success',
      message: `Vote of ${hotkey} saved: ${plural(jobs.length, 'job')} (${plural(registered, 'newly registered task')})`,
      tasks: jobs.map((job) => job.id),
    };
  }

  /** A validator's submission as submitted, or the aggregate list in the requested format. */
  async get(query: GetDesirabilitiesQueryDto): Promise<unknown[]> {
    if (query.hotkey !== undefined) {
      const submitted = await this.repository.findSubmitted(query.hotkey);
      if (!submitted)
        throw new NotFoundException(`No desirabilities submitted by hotkey ${query.hotkey}`);
      return submitted;
    }
    const jobs = await this.aggregate();
    return query.format === 'legacy' ? toLegacyFormat(jobs) : jobs;
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
