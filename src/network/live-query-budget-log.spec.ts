import { Clock } from '../common/clock/clock';
import { MetricsService } from '../common/metrics/metrics.service';
import { linesLoggedBy } from '../../test/support/logging-context';
import { CredibilityRecorder } from './credibility-recorder';
import { LiveQueryService } from './live-query.service';
import { MetagraphService } from './metagraph/metagraph.service';
import { ServingMiner } from './miner.entity';
import { CallBudgets } from './transport/call-budgets';
import { MinerClient } from './transport/miner-client';
import { testConfig } from '../../test/support/test-config';

const FREE_AT = new Date('2026-01-15T12:20:00Z');
const miners = [1, 2, 3].map((uid) => ({ uid, hotkey: `hk${uid}` }) as ServingMiner);

/** LiveQueryService.withBudgetLeft on miners 2 and 3 spent, its lines at `level`. */
function linesAt(level: string) {
  const budgets = {
    budgetOf: () => ({ calls: 8, windowMs: 3_600_000 }),
    left: (hotkeys: string[]) =>
      Promise.resolve(
        new Map(
          hotkeys.map((hotkey) => [
            hotkey,
            hotkey === 'hk1' ? { left: 2, nextAt: null } : { left: 0, nextAt: FREE_AT },
          ]),
        ),
      ),
  } as unknown as CallBudgets;
  const live = new LiveQueryService(
    {} as MetagraphService,
    {} as MinerClient,
    {} as CredibilityRecorder,
    budgets,
    testConfig(),
    new MetricsService(),
    new Clock(),
  );
  return linesLoggedBy(LiveQueryService.name, level, async () => {
    const { miners: left } = await live.withBudgetLeft(miners, 'user');
    expect(left.map(({ uid }) => uid)).toEqual([1]);
  });
}

// The README promises a debug line for a call not made for want of budget; the miners a query
// leaves out before calling never reached MinerClient's (a log audit found none at any level).
describe('The debug line of the miners an on-demand query leaves out for want of budget', () => {
  it('names them and when a call frees up, at debug', async () => {
    const lines = await linesAt('debug');
    expect(lines).toEqual([
      expect.objectContaining({
        level: 20,
        msg: '2 of 3 miners OnDemandRequest: not called, no call left in their budget',
        synapse: 'OnDemandRequest',
        purpose: 'user',
        uids: [2, 3],
        free_at: FREE_AT.toISOString(),
      }),
    ]);
  });

  it('is not written at info', async () => {
    expect(await linesAt('info')).toEqual([]);
  });
});
