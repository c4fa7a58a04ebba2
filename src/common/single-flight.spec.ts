import { SingleFlight } from './single-flight';

/** A promise and the functions that settle it, for work the test finishes when it wants. */
function deferred<T>() {
  let resolve!: (value: T) => void;
  let reject!: (error: Error) => void;
  const promise = new Promise<T>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

describe(SingleFlight.name, () => {
  it('runs the work once for callers of one key while it is under way, and shares its value', async () => {
    const flights = new SingleFlight<string, number>();
    const work = deferred<number>();
    let runs = 0;
    const start = () => {
      runs += 1;
      return work.promise;
    };
    const first = flights.run('a', start);
    expect(flights.has('a')).toBe(true);
    const second = flights.run('a', start);
    work.resolve(7);
    await expect(Promise.all([first, second])).resolves.toEqual([7, 7]);
    expect(runs).toBe(1);
  });

  it('keeps different keys apart', async () => {
    const flights = new SingleFlight<string, string>();
    const answers = await Promise.all([
      flights.run('a', () => Promise.resolve('a')),
      flights.run('b', () => Promise.resolve('b')),
    ]);
    expect(answers).toEqual(['a', 'b']);
  });

  it('lets the key go once the work settles: the next caller runs it again', async () => {
    const flights = new SingleFlight<string, number>();
    let runs = 0;
    const start = () => Promise.resolve((runs += 1));
    await expect(flights.run('a', start)).resolves.toBe(1);
    expect(flights.has('a')).toBe(false);
    await expect(flights.run('a', start)).resolves.toBe(2);
  });

  it('shares an error with every caller that joined, and keeps it from the next', async () => {
    const flights = new SingleFlight<string, number>();
    const work = deferred<number>();
    const first = flights.run('a', () => work.promise);
    const joined = flights.run('a', () => Promise.resolve(0));
    work.reject(new Error('database down'));
    await expect(first).rejects.toThrow('database down');
    await expect(joined).rejects.toThrow('database down');
    expect(flights.has('a')).toBe(false);
    await expect(flights.run('a', () => Promise.resolve(1))).resolves.toBe(1);
  });
});
