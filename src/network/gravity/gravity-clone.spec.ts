import { Logger } from '@nestjs/common';
import { existsSync, mkdtempSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createGravityRemote, GravityRemote } from '../../../test/support/gravity-remote';
import { causeOutput, GravityClone } from './gravity-clone';
import { GravityUnavailableError } from './gravity-errors';
import { processesLeft, runningProcesses } from '../../../test/support/processes';

const OTHER_VALIDATOR = '5DkMmXtWf16RNdusZGCrJ7ca7ADPgRnZLVWCWbgA7s7sy1AQ';

describe(GravityClone.name, () => {
  let remote: GravityRemote;
  let dataDir: string;
  const settings = () => ({ repoUrl: remote.url, branch: 'main', token: undefined, dataDir });

  beforeEach(() => {
    remote = createGravityRemote();
    dataDir = mkdtempSync(join(tmpdir(), 'gravity-clone-'));
  });
  afterEach(() => {
    remote.remove();
    rmSync(dataDir, { recursive: true, force: true });
  });

  /** Lock files as a git killed outright mid-fetch leaves them, `ageMs` old. */
  function leaveLocks(clone: GravityClone, ageMs: number): string[] {
    const when = new Date(Date.now() - ageMs);
    const locks = ['refs/heads/main.lock', 'packed-refs.lock'].map((path) =>
      join(clone.directory, path),
    );
    for (const lock of locks) {
      writeFileSync(lock, `${remote.head()}\n`);
      utimesSync(lock, when, when);
    }
    return locks;
  }

  it('fetches again past the lock files a git killed outright by an earlier run left', async () => {
    const earlier = new GravityClone(settings());
    await earlier.fetch();
    const locks = leaveLocks(earlier, 10 * 60_000);
    const head = remote.pushAs(OTHER_VALIDATOR, '[]');

    const warn = jest.spyOn(Logger.prototype, 'warn').mockImplementation(() => undefined);
    const clone = new GravityClone(settings());
    await clone.fetch();
    await clone.fetchAllBranches();
    expect(warn.mock.calls.map(([message]) => message as string).sort()).toEqual([
      'removed a stale git lock file: packed-refs.lock',
      'removed a stale git lock file: refs/heads/main.lock',
    ]);
    warn.mockRestore();
    expect(await clone.revision('refs/heads/main')).toBe(head);
    expect(await clone.revision('refs/remotes/gravity/main')).toBe(head);
    expect(locks.filter((lock) => existsSync(lock))).toEqual([]);
  });

  it('leaves alone a lock file that a git command running may hold', async () => {
    const clone = new GravityClone(settings());
    await clone.fetch();
    const [refLock] = leaveLocks(clone, 1_000);
    remote.pushAs(OTHER_VALIDATOR, '[]');
    const failure = await clone.fetch().catch((error: unknown) => error);
    expect(causeOutput(failure)).toMatch(/cannot lock ref 'refs\/heads\/main'/);
    expect(existsSync(refLock)).toBe(true);
  });

  describe('closed while a fetch hangs', () => {
    const seconds = `27.${process.pid}${Date.now() % 1000}`;
    afterEach(() => {
      delete process.env.GIT_SSH_COMMAND;
    });

    it('ends the fetch and every process it started at once, and runs no git command after', async () => {
      // A remote that never answers: git runs GIT_SSH_COMMAND (sh, then sleep) and waits.
      process.env.GIT_SSH_COMMAND = `sleep ${seconds}; false`;
      const clone = new GravityClone({ ...settings(), repoUrl: 'ssh://127.0.0.1/gravity.git' });
      const started = Date.now();
      const fetching = clone.fetch();
      while (runningProcesses(`sleep ${seconds}`).length === 0 && Date.now() - started < 10_000)
        await new Promise((resolve) => setTimeout(resolve, 20));
      expect(runningProcesses(`sleep ${seconds}`)).not.toEqual([]);

      clone.close();
      await expect(fetching).rejects.toThrow(GravityUnavailableError);
      await expect(fetching).rejects.toThrow(/git fetch: aborted: the service is stopping/);
      expect(Date.now() - started).toBeLessThan(10_000);
      await expect(processesLeft(`sleep ${seconds}`)).resolves.toEqual([]);
      await expect(clone.fetchAllBranches()).rejects.toThrow(/aborted/);
    });
  });
});
