import { Module } from '@nestjs/common';
import { DesirabilityController } from './desirability.controller';
import { DesirabilityService } from './desirability.service';

@Module({ controllers: [DesirabilityController], providers: [DesirabilityService] })
export class DesirabilityModule {}
