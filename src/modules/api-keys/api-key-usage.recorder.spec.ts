import { Logger } from '@nestjs/common';
import { ApiKeyUsageRecorder } from './api-key-usage.recorder';
import type { ApiKeysRepository } from './api-keys.repository';

const KEY_ID = '00000000-0000-4000-8000-000000000001';
const OTHER_ID = '00000000-0000-4000-8000-000000000002';

/** A recorder over a repository that keeps each batch it is given. */
function setUp() {
  const batches: Map<string, Date>[] = [];
  const repository = {
    recordLastUsed: async (batch: ReadonlyMap<string, Date>) => void batches.push(new Map(batch)),
  } as unknown as ApiKeysRepository;
  return { recorder: new ApiKeyUsageRecorder(repository), batches };
}

describe(ApiKeyUsageRecorder.name, () => {
  beforeEach(() => jest.spyOn(Logger.prototype, 'warn').mockImplementation(() => undefined));
  afterEach(() => {
    jest.useRealTimers();
    jest.restoreAllMocks();
  });

  it('writes the last use of each key, one batch for them all, once settled', async () => {
    const { recorder, batches } = setUp();
    recorder.record(KEY_ID, new Date('2026-11-20T12:00:00Z'));
    recorder.record(OTHER_ID, new Date('2026-11-20T12:00:01Z'));
    // The later use of a key is the one kept: last_used_at is never moved back.
    recorder.record(KEY_ID, new Date('2026-11-20T12:00:02Z'));
    expect(batches).toEqual([]);
    await recorder.settled();
    expect(batches).toEqual([
      new Map([
        [KEY_ID, new Date('2026-11-20T12:00:02Z')],
        [OTHER_ID, new Date('2026-11-20T12:00:01Z')],
      ]),
    ]);
  });

  it('writes on its own five seconds after the first use, not before', async () => {
    jest.useFakeTimers();
    const { recorder, batches } = setUp();
    recorder.record(KEY_ID, new Date('2026-11-20T12:00:00Z'));
    jest.advanceTimersByTime(4_999);
    expect(batches).toEqual([]);
    jest.advanceTimersByTime(1);
    await Promise.resolve();
    expect(batches).toEqual([new Map([[KEY_ID, new Date('2026-11-20T12:00:00Z')]])]);
  });

  // Usage recorded just before a shutdown (a deploy) was otherwise lost with the process.
  it('writes what is pending at shutdown, and nothing recorded after it', async () => {
    const { recorder, batches } = setUp();
    recorder.record(KEY_ID, new Date('2026-11-20T12:00:00Z'));
    await recorder.onModuleDestroy();
    expect(batches).toEqual([new Map([[KEY_ID, new Date('2026-11-20T12:00:00Z')]])]);
    recorder.record(OTHER_ID, new Date('2026-11-20T12:00:01Z'));
    await recorder.settled();
    expect(batches).toHaveLength(1);
  });
});
