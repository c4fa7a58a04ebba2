import { randomUUID } from 'node:crypto';
import { Clock } from '../../src/common/clock/clock';
import { loadConfig } from '../../src/config/load-config';
import { CallBudgetRepository } from '../../src/network/transport/call-budget.repository';
import { CallBudgets } from '../../src/network/transport/call-budgets';
import { MediumDatabase, openMediumDatabase } from '../support/medium-database';

const MINUTE_MS = 60_000;
const HOUR_MS = 60 * MINUTE_MS;

class StillClock extends Clock {
  private at = Date.parse('2026-01-10T12:00:00Z');

  override now(): Date {
    return new Date(this.at);
  }

  override advance(ms: number): void {
    this.at += ms;
  }
}

describe(`${CallBudgets.name} on Postgres`, () => {
  let medium: MediumDatabase;
  let repository: CallBudgetRepository;

  beforeAll(async () => {
    medium = await openMediumDatabase();
    repository = new CallBudgetRepository(medium.dataSource);
  });
  afterAll(() => medium.close());

  function budgets(clock: Clock, env: Record<string, string> = {}): CallBudgets {
    return new CallBudgets(repository, clock, loadConfig(env));
  }

  it('never grants more than the budget to concurrent takers (replicas share the row)', async () => {
    const miner = `miner-${randomUUID()}`;
    const replicas = [budgets(new StillClock()), budgets(new StillClock())];

    const granted = await Promise.all(
      Array.from({ length: 24 }, (_, call) =>
        replicas[call % 2].take(miner, 'GetContentsByBuckets'),
      ),
    );

    expect(granted.filter(Boolean)).toHaveLength(8);
  });

  it('after a 403, leaves no call for an hour on every replica, then the whole budget', async () => {
    const miner = `miner-${randomUUID()}`;
    const clock = new StillClock();
    const [first, second] = [budgets(clock), budgets(clock)];
    expect(await first.take(miner, 'GetContentsByBuckets')).toBe(true);
    clock.advance(20 * MINUTE_MS);

    const until = await first.spend(miner, 'GetContentsByBuckets');

    expect(until).toEqual(new Date(clock.now().getTime() + HOUR_MS));
    expect((await second.left([miner], 'GetContentsByBuckets')).get(miner)).toEqual({
      left: 0,
      nextAt: until,
    });
    clock.advance(HOUR_MS - 1);
    expect(await second.take(miner, 'GetContentsByBuckets')).toBe(false);
    clock.advance(1);
    expect((await second.left([miner], 'GetContentsByBuckets')).get(miner)).toEqual({
      left: 8,
      nextAt: null,
    });
  });

  it("counts future-dated calls when the budget's window is shorter than the miner's hour", async () => {
    const miner = `miner-${randomUUID()}`;
    const clock = new StillClock();
    const short = budgets(clock, { MINER_CALL_BUDGETS: 'GetContentsByBuckets=3/15m' });
    const refusedAt = clock.now().getTime();

    await short.spend(miner, 'GetContentsByBuckets');

    clock.advance(50 * MINUTE_MS);
    expect(await short.take(miner, 'GetContentsByBuckets')).toBe(false);
    expect((await short.left([miner], 'GetContentsByBuckets')).get(miner)).toEqual({
      left: 0,
      nextAt: new Date(refusedAt + HOUR_MS),
    });
    clock.advance(10 * MINUTE_MS);
    expect(await short.take(miner, 'GetContentsByBuckets')).toBe(true);
  });

  it('never moves the end of a full window earlier', async () => {
    const miner = `miner-${randomUUID()}`;
    const later = new Date('2026-01-10T13:00:00Z');
    await repository.fill(miner, 'GetMinerIndex', later, 1);

    await repository.fill(miner, 'GetMinerIndex', new Date('2026-01-10T12:30:00Z'), 2);

    const calls = await repository.recentCalls(
      [miner],
      'GetMinerIndex',
      new Date('2026-01-10T12:45:00Z'),
      HOUR_MS,
    );
    expect(calls.get(miner)).toEqual([later, later]);
  });
});
