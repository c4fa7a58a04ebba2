import { indexNotLoaded } from './empty-answers';

const SYNC = { intervalMs: 3_900_000, onStart: true, fetchTimeoutMs: 120_000 };

describe(indexNotLoaded.name, () => {
  // "No miner's index has been read, or every sync failed" named a cause that was not: indexes
  // had been read, held nothing, and were dropped (an error texts audit's finding).
  it('says indexes were read and hold nothing when one was read, as system-status does', () => {
    expect(indexNotLoaded(SYNC, new Date('2026-12-06T10:31:55Z'))).toMatch(
      /^The miners' data index is not loaded \(the indexes read hold no data, or were dropped since; the last was read at 2026-12-06T10:31:55.000Z\)/,
    );
    expect(indexNotLoaded(SYNC)).toMatch(
      /^The miners' data index is not loaded \(no miner's index has been read yet\)/,
    );
  });

  // A start skips the sync when one ran within the interval: "runs at start" was not so.
  it('says a start runs the sync only when none ran within the interval', () => {
    expect(indexNotLoaded(SYNC)).toContain(
      'The index sync runs every 65 minutes, and at start unless one ran within that interval',
    );
  });
});
