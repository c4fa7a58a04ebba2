import { Injectable, Logger, OnApplicationBootstrap } from '@nestjs/common';
import { ValidatorIdentity } from '../../network/bittensor/validator-identity';
import { PublicationService } from '../publication/publication.service';
import { TasksService } from '../tasks/tasks.service';
import { DesirabilityRepository } from './desirability.repository';

/**
 * At start with publication enabled, queues the stored vote when its publication row does not
 * hold it: a vote stored while publication was disabled queued nothing, and would otherwise
 * reach the network only with the client's next vote. And a publication made for another
 * target (repository, branch or netuid) starts afresh for this one.
 */
@Injectable()
export class StoredVotePublication implements OnApplicationBootstrap {
  private readonly logger = new Logger(StoredVotePublication.name);

  constructor(
    private readonly repository: DesirabilityRepository,
    private readonly tasks: TasksService,
    private readonly publication: PublicationService,
    private readonly identity: ValidatorIdentity,
  ) {}

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
        `the vote of ${hotkey} stored here (or its withdrawal) was not queued for publication, ` +
          'as it was made while publication was disabled: queued now',
      );
    return queued;
  }
}
