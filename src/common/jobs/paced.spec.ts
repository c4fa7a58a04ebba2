import { paced } from './paced';

describe(paced.name, () => {
  it('starts one item per spacing at most, with at most `concurrency` running', async () => {
    const starts: number[] = [];
    let running = 0;
    let mostRunning = 0;
    const origin = performance.now();
    await paced(
      [1, 2, 3, 4, 5, 6],
      2,
      40,
      () => false,
      async () => {
        starts.push(performance.now() - origin);
        running += 1;
        mostRunning = Math.max(mostRunning, running);
        await new Promise((resolve) => setTimeout(resolve, 100));
        running -= 1;
      },
    );
    expect(starts).toHaveLength(6);
    expect(mostRunning).toBe(2);
    for (let index = 1; index < starts.length; index++)
      expect(starts[index] - starts[index - 1]).toBeGreaterThanOrEqual(39);
  });

  it('starts nothing more once stopped, and waits for what runs', async () => {
    let started = 0;
    let finished = 0;
    await paced(
      [1, 2, 3, 4],
      1,
      0,
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
});
