import { Module } from '@nestjs/common';
import { NetworkModule } from '../../network/network.module';
import { PublicationModule } from '../publication/publication.module';
import { TasksModule } from '../tasks/tasks.module';
import { DesirabilityController } from './desirability.controller';
import { DesirabilityRepository } from './desirability.repository';
import { DesirabilityService } from './desirability.service';

@Module({
  imports: [NetworkModule, TasksModule, PublicationModule],
  controllers: [DesirabilityController],
  providers: [DesirabilityService, DesirabilityRepository],
})
export class DesirabilityModule {}
