import { setTimeout as sleep } from 'node:timers/promises';
import { Clock } from '../../common/clock/clock';
import { ServingMiner } from '../miner.entity';
import { BudgetLeft, CallBudgets } from '../transport/call-budgets';
import { MinerQueue } from './miner-queue';
import { testConfig } from '../../../test/support/test-config';

const HOUR_MS = 3_600_000;
const MINER = { uid: 1, hotkey: 'hk1' } as ServingMiner;

/**
 * A queue over budgets kept by a database whose clock runs `databaseAheadMs` ahead of the
 * service's (negative: behind), where MINER's next call frees `inMs` from now.
 */
function setUp(databaseAheadMs: number, inMs: number, intervalMs = HOUR_MS) {
  const clock = new Clock();
  const databaseNow = () => new Date(clock.now().getTime() + databaseAheadMs);
  const budgets = {
    now: jest.fn(() => Promise.resolve(databaseNow())),
    left: jest.fn(() =>
      Promise.resolve(
        new Map<string, BudgetLeft>([
          [MINER.hotkey, { left: 0, nextAt: new Date(databaseNow().getTime() + inMs) }],
        ]),
      ),
    ),
  };
  const config = testConfig({ network: { indexSync: { intervalMs } } });
  const state = { stopping: false };
  const queue = new MinerQueue(
    budgets as unknown as CallBudgets,
    clock,
    config,
    () => state.stopping,
  );
  return { queue, clock, state };
}

describe(MinerQueue.name, () => {
  // An audit's finding: `nextAt` is Postgres' time, compared with the service's clock. With the
  // database's host an hour ahead the miner was skipped (its call an hour off); an hour behind,
  // it was called at once and refused by its budget (docs/decisions.md, "Clocks").
  it.each([
    ['ahead of', HOUR_MS],
    ['behind', -HOUR_MS],
  ])(
    "dates a miner's next call by the database's clock, an hour %s the service's",
    async (_side, databaseAheadMs) => {
      const { queue, clock } = setUp(databaseAheadMs, 60_000);
      const [queued] = await queue.inBudgetOrder([MINER]);
      const inMs = queued.notBefore - clock.now().getTime();
      expect(inMs).toBeGreaterThan(50_000);
      // The offset is read at the middle of the database's answer's round trip, so it may be off
      // by half of it: 60,000.5 ms when a millisecond ticked between (a CI run's failure).
      expect(inMs).toBeLessThanOrEqual(60_000 + 5);
    },
  );

  // The service's clock set back 6 h while a sync waited for a miner's call: the wait, and the
  // whole sync with it, went on for 6 h.
  it('waits no longer than its longest wait, though the clock is set back meanwhile', async () => {
    // An interval of 1.2 s: the longest wait is a sixth, 200 ms.
    const { queue, clock, state } = setUp(0, 100, 1_200);
    const [queued] = await queue.inBudgetOrder([MINER]);
    const waited = queue.waitForBudget(queued.notBefore).then(() => 'done');
    clock.advance(-6 * HOUR_MS);
    // Unref'd: the race is won in 200 ms, and the timer left 2.8 s tripped the open-handle check
    // at the file's end on a loaded machine (a full run's failure).
    const outcome = await Promise.race([
      waited,
      sleep(3_000, undefined, { ref: false }).then(() => 'still waiting'),
    ]);
    state.stopping = true;
    await waited;
    expect(outcome).toBe('done');
  });
});
