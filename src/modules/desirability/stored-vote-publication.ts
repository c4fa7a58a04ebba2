import { Injectable, Logger, OnApplicationBootstrap, OnModuleInit } from '@nestjs/common';
import { ValidatorIdentity } from '../../network/bittensor/validator-identity';
import { PublicationService } from '../publication/publication.service';
import { TaskLifecycleService } from '../tasks/task-lifecycle.service';
import { TasksService } from '../tasks/tasks.service';
import { DesirabilityRepository } from './desirability.repository';

/**
 * Keeps the publication holding what the stored vote publishes now. At start with publication
 * enabled, queues the stored vote when its publication row does not hold it: a vote stored
 * while publication was disabled queued nothing, and would otherwise reach the network only
 * with the client's next vote. And a publication made for another target (repository, branch
 * or netuid) starts afresh for this one. After each lifecycle pass, queues the vote again when
 * a task it publishes has ended: its file leaves ended tasks out
 * (PublicationService.publishedJobs).
 */
@Injectable()
export class StoredVotePublication implements OnModuleInit, OnApplicationBootstrap {
  private readonly logger = new Logger(StoredVotePublication.name);

  constructor(
    private readonly repository: DesirabilityRepository,
    private readonly tasks: TasksService,
    private readonly publication: PublicationService,
    private readonly identity: ValidatorIdentity,
    private readonly lifecycle: TaskLifecycleService,
  ) {}

  onModuleInit(): void {
    // The next pass looks again.
    this.lifecycle.onEachPass(() =>
      this.dropEndedTasks().then(
        () => undefined,
        (error: Error) =>
          this.logger.warn(
            `the vote could not be queued for publication without its ended tasks: ${error.message}`,
          ),
      ),
    );
  }

  async onApplicationBootstrap(): Promise<void> {
    if (!this.publication.enabled) return;
    // Not a reason to stay down: the next start looks again, and so does the next vote.
    await this.queue().catch((error: Error) =>
      this.logger.warn(`the stored vote could not be queued for publication: ${error.message}`),
    );
  }

  /**
   * Under the registration lock, as a vote is stored: replicas starting together queue it once
   * (the second finds the row holding it), and a vote submitted meanwhile comes before or after.
   */
  async queue(): Promise<boolean> {
    const hotkey = this.identity.hotkey;
    const { restarted, queued } = await this.tasks.registering(async (manager) => ({
      restarted: await this.publication.restartForNewTarget(hotkey, manager),
      queued: await this.publication.enqueueUnpublished(
        hotkey,
        await this.repository.findVote(hotkey, manager),
        manager,
      ),
    }));
    // The old target's state is no longer shown: its history stays here.
    if (restarted)
      this.logger.log(
        `vote ${restarted.version} was being published to ${restarted.target} ` +
          `(${restarted.state}, ${restarted.attempts} failed attempts` +
          `${restarted.last_error ? `, last error: ${restarted.last_error}` : ''}); votes now go ` +
          `to ${this.publication.target()}: its publication starts afresh there`,
      );
    if (queued)
      this.logger.log(
        `the vote of ${hotkey} stored here (or its withdrawal) was not queued for publication ` +
          'as it publishes now (made while publication was disabled, or a task of it ended ' +
          'meanwhile): queued now',
      );
    return queued;
  }

  /**
   * Queues the stored vote again when the publication names a task that has ended: the file
   * published is then the vote's jobs whose tasks are still active. Under the registration lock,
   * as a vote is stored, so a vote submitted meanwhile comes before or after, and replicas
   * doing it together queue it once. True when queued.
   */
  async dropEndedTasks(): Promise<boolean> {
    const hotkey = this.identity.hotkey;
    if (!(await this.publication.namesEndedTask(hotkey))) return false;
    const queued = await this.tasks.registering(async (manager) =>
      this.publication.enqueueUnpublished(
        hotkey,
        await this.repository.findVote(hotkey, manager),
        manager,
      ),
    );
    if (queued)
      this.logger.log(
        `a task of the vote of ${hotkey} ended: the vote is queued for publication without it`,
      );
    return queued;
  }
}
