import { Logger } from '@nestjs/common';
import { PublicationWorker } from './publication-worker.service';
import { PublicationRow } from './publication.types';

const HOTKEY = '5F4tQyWrhfGVcNhoqeiNsR6KjD4wMZ2kfhLj4oHYuyHbZAc3';
const SHA = '3f786850e387550fdab836ed7e6dc881de23001b';

/**
 * A worker whose claim of version 3 is lost at its first record (the push's): `now` is the row
 * as the worker finds it afterwards. Returns what it logged.
 */
async function loseClaim(now: Pick<PublicationRow, 'version' | 'claimed_by'>) {
  const claimed = { hotkey: HOTKEY, version: 3, commit_sha: null, attempts: 0 };
  let claims = 0;
  const repository = {
    claim: () => Promise.resolve(claims++ === 0 ? claimed : undefined),
    recordPushed: () => Promise.resolve(false),
    find: () => Promise.resolve({ ...claimed, ...now }),
    release: jest.fn(() => Promise.resolve()),
  };
  const config = {
    netuid: 1,
    publication: { intervalMs: 5000, leaseMs: 600_000, retryMs: 12_000, retryMaxMs: 3_600_000 },
  };
  const worker = new PublicationWorker(
    repository as never,
    { enabled: true } as never,
    {} as never,
    { recordPublicationAttempt: () => undefined } as never,
    { now: () => new Date() } as never,
    {} as never,
    { hotkey: HOTKEY, keypair: {} } as never,
    { publish: () => Promise.resolve({ sha: SHA, pushed: true }) } as never,
    {} as never,
    config as never,
  );
  const log = jest.spyOn(Logger.prototype, 'log').mockImplementation(() => undefined);
  const warn = jest.spyOn(Logger.prototype, 'warn').mockImplementation(() => undefined);
  await worker.runOnce();
  expect(repository.release).toHaveBeenCalledTimes(1);
  return { logged: log.mock.calls.map(([line]) => String(line)), warned: warn.mock.calls };
}

describe(PublicationWorker.name, () => {
  afterEach(() => jest.restoreAllMocks());

  it('says a newer vote replaced the one it was publishing when the version moved on', async () => {
    const { logged, warned } = await loseClaim({ version: 4, claimed_by: null });
    expect(logged).toContain('vote 3 was replaced by a newer vote before it was published');
    expect(warned).toEqual([]);
  });

  it('says its lease ran out and another replica took over when the version is still its own', async () => {
    const { logged, warned } = await loseClaim({
      version: 3,
      claimed_by: 'other-host:41:0a1b2c3d',
    });
    expect(logged.filter((line) => line.includes('replaced'))).toEqual([]);
    expect(warned).toEqual([
      [
        "vote 3: this replica's claim ran out (PUBLICATION_LEASE_MS) before it recorded its step, " +
          'and another replica (other-host:41:0a1b2c3d) took the publication over; its record stands',
      ],
    ]);
  });
});
