import { Module } from '@nestjs/common';
import { NetworkModule } from '../../network/network.module';
import { TasksModule } from '../tasks/tasks.module';
import { PublicationController } from './publication.controller';
import { PublicationRepository } from './publication.repository';
import { PublicationService } from './publication.service';
import { PublicationWorker } from './publication-worker.service';

/** Publishing the validator's vote to the network (Gravity repository, chain commitment). */
@Module({
  imports: [NetworkModule, TasksModule],
  controllers: [PublicationController],
  providers: [PublicationService, PublicationRepository, PublicationWorker],
  exports: [PublicationService],
})
export class PublicationModule {}
