import { SubtensorConfig } from '../../config/app-config';
import { ChainUnavailableError, SubtensorConnection } from '../chain/subtensor-connection';
import { MetagraphFile } from '../protocol';
import { ChainMetagraphSource } from './chain-metagraph-source';

const SYNC_INTERVAL_MS = 60_000;

/** A connection whose reads succeed or fail as the test lists them, never touching a node. */
function sourceReading(outcomes: ('ok' | 'fail')[]) {
  const metagraph: MetagraphFile = { netuid: 13, block: 1, updated_at: '', neurons: [] };
  const connection = {
    address: 'ws://127.0.0.1:9944',
    use: () => {
      const outcome = outcomes.shift() ?? 'ok';
      return outcome === 'ok'
        ? Promise.resolve(metagraph)
        : Promise.reject(new ChainUnavailableError('no answer within 1000 ms'));
    },
  } as unknown as SubtensorConnection;
  const settings = { syncIntervalMs: SYNC_INTERVAL_MS } as SubtensorConfig;
  return new ChainMetagraphSource(connection, 13, settings);
}

describe(ChainMetagraphSource.name, () => {
  beforeEach(() => jest.useFakeTimers());
  afterEach(() => jest.useRealTimers());

  // A node that is down is asked again soon (the metagraph in use grows stale meanwhile), but
  // not hammered: 5 s, then twice as long each time, never longer than the sync interval.
  it('reads every sync interval, and after a failed read sooner: 5 s, doubling, up to the interval', async () => {
    const source = sourceReading(['ok', 'fail', 'fail', 'fail', 'fail', 'fail', 'ok', 'fail']);
    const readAt: number[] = [];
    const start = Date.now();
    const stop = source.watch(async () => {
      readAt.push(Date.now() - start);
      await source.read().catch(() => undefined);
    });
    try {
      for (let second = 0; second < 400; second += 1) await jest.advanceTimersByTimeAsync(1000);
    } finally {
      stop();
    }
    const waits = readAt.map((at, index) => at - (readAt[index - 1] ?? 0));
    expect(waits.slice(0, 9)).toEqual([
      60_000, // the first read was made at start, by MetagraphService
      60_000, // after a good read
      5000,
      10_000,
      20_000,
      40_000,
      60_000, // 80 s would be past the interval
      60_000, // after a good read again
      5000, // a good read started the backoff over
    ]);
  });

  // Shutdown stops the watch while a read may be under way: no read may follow it.
  it('reads no more once stopped, also when stopped during a read', async () => {
    const source = sourceReading([]);
    let reads = 0;
    const stop = source.watch(async () => {
      reads += 1;
      if (reads === 2) stop();
      await source.read();
    });
    await jest.advanceTimersByTimeAsync(SYNC_INTERVAL_MS);
    expect(reads).toBe(1);
    await jest.advanceTimersByTimeAsync(10 * SYNC_INTERVAL_MS);
    expect(reads).toBe(2);
  });

  it('describes itself by the node address and the netuid, as a subtensor network', () => {
    const source = sourceReading([]);
    expect(source.description).toBe('subtensor ws://127.0.0.1:9944 netuid 13');
    expect(source.networkOf()).toBe('subtensor');
  });
});
