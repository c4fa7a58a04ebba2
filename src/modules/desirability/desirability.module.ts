import { Module } from '@nestjs/common';
import { NetworkModule } from '../../network/network.module';
import { TasksModule } from '../tasks/tasks.module';
import { DesirabilityController } from './desirability.controller';
import { DesirabilityRepository } from './desirability.repository';
import { DesirabilityService } from './desirability.service';

@Module({
  imports: [NetworkModule, TasksModule],
  controllers: [DesirabilityController],
  providers: [DesirabilityService, DesirabilityRepository],
})
export class DesirabilityModule {}
