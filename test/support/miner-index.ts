import { DataSource } from 'typeorm';
import { IndexLabelsRepository } from '../../src/network/index/index-labels.repository';
import { IndexTotalsRepository } from '../../src/network/index/index-totals.repository';
import { MinerIndexReadRepository } from '../../src/network/index/miner-index-read.repository';
import { MinerIndexRepository } from '../../src/network/index/miner-index.repository';
import { MinerIndexService } from '../../src/network/index/miner-index.service';

/** The miner index's service and repositories on `dataSource`, wired as MinerIndexModule does. */
export function minerIndexOn(dataSource: DataSource): {
  repository: MinerIndexRepository;
  service: MinerIndexService;
} {
  const totals = new IndexTotalsRepository();
  const labels = new IndexLabelsRepository(dataSource, totals);
  const repository = new MinerIndexRepository(dataSource, totals, labels);
  const reads = new MinerIndexReadRepository(dataSource);
  return { repository, service: new MinerIndexService(repository, totals, reads, labels) };
}
