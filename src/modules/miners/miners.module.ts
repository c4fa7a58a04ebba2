import { Module } from '@nestjs/common';
import { NetworkModule } from '../../network/network.module';
import { MinersController } from './miners.controller';
import { MinersService } from './miners.service';

@Module({
  imports: [NetworkModule],
  controllers: [MinersController],
  providers: [MinersService],
})
export class MinersModule {}
