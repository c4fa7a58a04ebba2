import { Module } from '@nestjs/common';
import { IndexLabelsRepository } from './index-labels.repository';
import { IndexTotalsRepository } from './index-totals.repository';
import { MinerIndexReadRepository } from './miner-index-read.repository';
import { MinerIndexRepository } from './miner-index.repository';
import { MinerIndexService } from './miner-index.service';

/**
 * The miners' index and its totals (miner_index, labels, the per-miner and network totals):
 * this module owns their tables, its repositories hold all their SQL (MinerIndexRepository the
 * index's writes, IndexTotalsRepository the totals', IndexLabelsRepository the labels',
 * MinerIndexReadRepository the reads), and the
 * rest of the code goes through MinerIndexService. It sits below the network (which writes the
 * index and moves credibility) and the stats (which read it), and imports neither.
 */
@Module({
  providers: [
    MinerIndexRepository,
    IndexTotalsRepository,
    MinerIndexReadRepository,
    IndexLabelsRepository,
    MinerIndexService,
  ],
  exports: [MinerIndexService],
})
export class MinerIndexModule {}
