import { inPool } from './in-pool';

describe(inPool.name, () => {
  it('runs every item with at most `concurrency` at once', async () => {
    let running = 0;
    let mostRunning = 0;
    const done: number[] = [];
    await inPool(
      [1, 2, 3, 4, 5, 6],
      2,
      () => false,
      async (item) => {
        running += 1;
        mostRunning = Math.max(mostRunning, running);
        await new Promise((resolve) => setTimeout(resolve, 10 * (item % 3)));
        running -= 1;
        done.push(item);
      },
    );
    expect(done.sort()).toEqual([1, 2, 3, 4, 5, 6]);
    expect(mostRunning).toBe(2);
  });

  it('starts nothing more once stopped, and waits for what runs', async () => {
    let started = 0;
    let finished = 0;
    await inPool(
      [1, 2, 3, 4],
      1,
      () => started >= 2,
      async () => {
        started += 1;
        await new Promise((resolve) => setTimeout(resolve, 20));
        finished += 1;
      },
    );
    expect(started).toBe(2);
    expect(finished).toBe(2);
  });

  // Shutdown comes while the pool is full: the item waiting for a slot must not start once one
  // frees up (the index sync would call one more miner per worker after its calls were aborted).
  it('starts no item that was waiting for a slot when it was stopped', async () => {
    let stopped = false;
    const started: number[] = [];
    await inPool(
      [1, 2, 3],
      1,
      () => stopped,
      async (item) => {
        started.push(item);
        await new Promise((resolve) => setTimeout(resolve, 20));
        stopped = true;
      },
    );
    expect(started).toEqual([1]);
  });
});
