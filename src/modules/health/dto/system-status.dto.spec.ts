import { systemStatusReport } from '../status-reports';
import { SYSTEM_COMPONENTS_EXAMPLE } from './system-status.dto';

describe('the SystemComponents example', () => {
  const { database, redis, miners, miner_index, chain, publication } = SYSTEM_COMPONENTS_EXAMPLE;

  it('is a healthy report, as the SystemStatus example says', () => {
    const report = systemStatusReport(
      { components: { database, miners, chain, publication }, network: 'subtensor' },
      { redis, minerIndex: miner_index },
      performance.now(),
      new Date(),
    );
    expect(report.status).toBe('healthy');
    expect(report.components).toEqual(SYSTEM_COMPONENTS_EXAMPLE);
  });

  // Assembled from the fields' examples, every component said `healthy` beside an `error`.
  it('gives no healthy component an error, and counts that add up', () => {
    for (const component of Object.values(SYSTEM_COMPONENTS_EXAMPLE))
      expect(component.status === 'healthy' && 'error' in component).toBe(false);
    expect(miners.available).toBeLessThanOrEqual(miners.total - miners.validators);
    expect(miner_index.usable).toBeLessThanOrEqual(Math.min(miner_index.loaded, miners.available));
  });
});
