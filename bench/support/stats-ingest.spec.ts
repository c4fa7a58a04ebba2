import type { DataSource } from 'typeorm';
import { IndexLabelsRepository } from '../../src/network/index/index-labels.repository';
import { IndexTotalsRepository } from '../../src/network/index/index-totals.repository';
import { MinerIndexRepository } from '../../src/network/index/miner-index.repository';
import { instrument, STEP_METHODS } from './stats-ingest';

// bench:stats drops its step table when instrument finds a step no longer there: moving the
// labels' SQL to IndexLabelsRepository did so without a word (a review's finding).
describe(instrument.name, () => {
  it("finds every step of an index replace on the index's repositories, as they are wired", () => {
    const dataSource = {} as DataSource;
    const totals = new IndexTotalsRepository();
    const labels = new IndexLabelsRepository(dataSource, totals);
    const repository = new MinerIndexRepository(dataSource, totals, labels);
    expect(STEP_METHODS.length).toBeGreaterThan(0);
    expect(instrument(repository, totals, labels)).toBe(true);
  });
});
