import { Injectable } from '@nestjs/common';
import { MinerCounts, MinersRepository } from './miners.repository';

/** The network module's public face: other modules call this, never the repositories. */
@Injectable()
export class NetworkService {
  constructor(private readonly miners: MinersRepository) {}

  countMiners(): Promise<MinerCounts> {
    return this.miners.countMiners();
  }
}
