import { Module } from '@nestjs/common';
import { MinerIndexRepository } from './miner-index.repository';
import { MinerIndexService } from './miner-index.service';

/**
 * The miners' index and its totals (miner_index, labels, the per-miner and network totals):
 * this module owns their tables, MinerIndexRepository holds all their SQL, and the rest of the
 * code goes through MinerIndexService. It sits below the network (which writes the index and
 * moves credibility) and the stats (which read it), and imports neither.
 */
@Module({
  providers: [MinerIndexRepository, MinerIndexService],
  exports: [MinerIndexService],
})
export class MinerIndexModule {}
