import { Module } from '@nestjs/common';
import { JobsModule } from '../../common/jobs/jobs.module';
import { NetworkModule } from '../../network/network.module';
import { PublicationModule } from '../publication/publication.module';
import { TasksModule } from '../tasks/tasks.module';
import { DesirabilityController } from './desirability.controller';
import { DesirabilityRepository } from './desirability.repository';
import { DesirabilityService } from './desirability.service';
import { NetworkAggregateService } from './network-aggregate.service';
import { NetworkVotesRepository } from './network-votes.repository';
import { NetworkVotesService } from './network-votes.service';
import { OwnerDesirabilities } from './owner-desirabilities';
import { StoredVotePublication } from './stored-vote-publication';

@Module({
  imports: [JobsModule, NetworkModule, TasksModule, PublicationModule],
  controllers: [DesirabilityController],
  providers: [
    DesirabilityService,
    DesirabilityRepository,
    OwnerDesirabilities,
    NetworkVotesService,
    NetworkVotesRepository,
    NetworkAggregateService,
    StoredVotePublication,
  ],
})
export class DesirabilityModule {}
