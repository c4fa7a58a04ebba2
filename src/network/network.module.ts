import { Module } from '@nestjs/common';
import { MinersRepository } from './miners.repository';
import { NetworkService } from './network.service';

@Module({
  providers: [NetworkService, MinersRepository],
  exports: [NetworkService],
})
export class NetworkModule {}
