import { Logger } from '@nestjs/common';
import { Store, storage } from 'nestjs-pino/storage';
import { pino } from 'pino';
import { WriteBuffer } from './write-buffer';

function buffer(delayMs: number, write: (batch: ReadonlyMap<string, number>) => Promise<void>) {
  const logger = new Logger('test');
  const warn = jest.spyOn(logger, 'warn').mockImplementation(() => undefined);
  return { writes: new WriteBuffer({ delayMs, write, what: 'sums', logger }), warn };
}

describe(WriteBuffer.name, () => {
  it('folds the changes of one key and writes them in one batch after the delay', async () => {
    const batches: Map<string, number>[] = [];
    const { writes } = buffer(20, async (batch) => void batches.push(new Map(batch)));
    writes.add('a', (sum = 0) => sum + 1);
    writes.add('a', (sum = 0) => sum + 2);
    writes.add('b', (sum = 0) => sum + 5);
    expect(batches).toEqual([]);
    await new Promise((resolve) => setTimeout(resolve, 60));
    expect(batches).toEqual([
      new Map([
        ['a', 3],
        ['b', 5],
      ]),
    ]);
  });

  // A buffer that armed its timer once only wrote its later changes at shutdown: key usage
  // after the first batch stayed unrecorded for as long as the process ran.
  it('writes a change made after a batch was written on its own, after the delay again', async () => {
    const batches: Map<string, number>[] = [];
    const { writes } = buffer(20, async (batch) => void batches.push(new Map(batch)));
    writes.add('a', () => 1);
    await new Promise((resolve) => setTimeout(resolve, 60));
    writes.add('b', () => 2);
    await new Promise((resolve) => setTimeout(resolve, 60));
    expect(batches).toEqual([new Map([['a', 1]]), new Map([['b', 2]])]);
  });

  it('settles only once the writes already started have ended', async () => {
    let stored = 0;
    const { writes } = buffer(10_000, async (batch) => {
      await new Promise((resolve) => setTimeout(resolve, 20));
      stored += batch.get('a') ?? 0;
    });
    writes.add('a', () => 7);
    await writes.settled();
    expect(stored).toBe(7);
  });

  it('writes what is pending on close and ignores later changes', async () => {
    const batches: Map<string, number>[] = [];
    const { writes } = buffer(10_000, async (batch) => void batches.push(new Map(batch)));
    writes.add('a', () => 1);
    await writes.close();
    writes.add('a', () => 2);
    await writes.settled();
    expect(batches).toEqual([new Map([['a', 1]])]);
  });

  it('logs a failed write instead of throwing, and keeps writing later batches', async () => {
    let calls = 0;
    const { writes, warn } = buffer(0, async () => {
      calls += 1;
      if (calls === 1) throw new Error('database down');
    });
    writes.add('a', () => 1);
    await writes.settled();
    writes.add('a', () => 2);
    await writes.settled();
    expect(calls).toBe(2);
    expect(warn).toHaveBeenCalledWith('could not record sums: database down (1 change dropped)');
  });

  // A batch fails every delay while the database is away: about 700 lines a recorder in an hour
  // (a log audit's finding). One line, then one per 10 s counting the others.
  it('logs failing writes at most once per 10 s, counting the others', async () => {
    jest.useFakeTimers();
    try {
      const { writes, warn } = buffer(500, async () => {
        throw new Error('database down');
      });
      for (let second = 0; second < 12; second += 1) {
        writes.add('a', () => 1);
        writes.add('b', () => 1);
        await jest.advanceTimersByTimeAsync(1000);
      }
      expect(warn.mock.calls).toEqual([
        ['could not record sums: database down (2 changes dropped)'],
        [
          { count: 9 },
          'could not record sums 9 more times in 10 s; the last: database down (2 changes dropped)',
        ],
      ]);
    } finally {
      jest.useRealTimers();
    }
  });

  it('says at close the failures held back, whose summary would otherwise be lost', async () => {
    const { writes, warn } = buffer(0, async () => {
      throw new Error('database down');
    });
    writes.add('a', () => 1);
    await writes.settled();
    writes.add('a', () => 1);
    writes.add('b', () => 1);
    await writes.close();
    expect(warn.mock.calls).toEqual([
      ['could not record sums: database down (1 change dropped)'],
      [
        { count: 1 },
        'could not record sums 1 more time in 10 s; the last: database down (2 changes dropped)',
      ],
    ]);
  });

  // The first change arms the timer, often while a request is handled: the batch's failure was
  // logged in that request's scope (nestjs-pino's storage), under an unrelated request's id.
  it("logs a batch armed during a request without that request's id", async () => {
    const { writes, warn } = buffer(0, async () => {
      throw new Error('database down');
    });
    // The request id the failure is logged under, if any: the timer alone writes the batch.
    const loggedUnder = new Promise<unknown>((resolve) =>
      warn.mockImplementation(() => resolve(storage.getStore()?.logger.bindings().req)),
    );
    const request = new Store(pino({ enabled: false }).child({ req: { id: 'unrelated' } }));
    storage.run(request, () => writes.add('a', () => 1));
    expect(await loggedUnder).toBeUndefined();
  });

  // A process that ends without Nest's shutdown hooks must not wait for the next batch.
  it('does not keep the process up while a batch waits', async () => {
    const timers = () => process.getActiveResourcesInfo().filter((r) => r === 'Timeout').length;
    const { writes } = buffer(10_000, async () => undefined);
    const before = timers();
    writes.add('a', () => 1);
    expect(timers()).toBe(before);
    await writes.close();
  });
});
