import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Logger } from '@nestjs/common';
import { NOT_READY_RETRY_AFTER_SECONDS } from '../../common/errors/retry-later';
import { NOT_UTF8 } from './repo-file-reader';
import { ReposRepository } from './repos.repository';
import { listedRepoName, NAMES_NOT_LOADED, ReposService } from './repos.service';
import { testConfig } from '../../../test/support/test-config';

describe('listedRepoName', () => {
  it('lists a name without its surrounding white space', () => {
    expect([' alice/x ', 'alice/x', '\tbob/y\r\n', 'a b/c'].map(listedRepoName)).toEqual([
      'alice/x',
      'alice/x',
      'bob/y',
      'a b/c',
    ]);
  });

  it('lists nothing for null, blank values and no_dataset_provided, padded or not', () => {
    expect(
      [null, '', '   ', 'no_dataset_provided', ' no_dataset_provided '].map(listedRepoName),
    ).toEqual([undefined, undefined, undefined, undefined, undefined]);
  });

  it('skips a value over 1000 characters once trimmed, counting characters as code points', () => {
    expect(listedRepoName(` ${'a'.repeat(1000)} `)).toBe('a'.repeat(1000));
    expect(listedRepoName('a'.repeat(1001))).toEqual({ skipped: 'too long' });
    // 1000 characters, 2000 UTF-16 units and bytes.
    expect(listedRepoName('😀'.repeat(500))).toBe('😀'.repeat(500));
    expect(listedRepoName('é'.repeat(1000))).toBe('é'.repeat(1000));
  });

  it("skips a name over 2000 bytes of UTF-8, too long for the table's index", () => {
    expect(listedRepoName('名'.repeat(666))).toBe('名'.repeat(666));
    expect(listedRepoName('名'.repeat(667))).toEqual({ skipped: 'too long' });
  });

  it('skips a name Postgres cannot store as it is', () => {
    expect(['a/b\u0000', 'a/\ud800b', '\udc00'].map(listedRepoName)).toEqual([
      { skipped: 'not storable' },
      { skipped: 'not storable' },
      { skipped: 'not storable' },
    ]);
    expect(listedRepoName('a/\ud83d\ude00')).toBe('a/😀');
  });

  it('skips a name whose bytes are not UTF-8', () => {
    expect(listedRepoName(NOT_UTF8)).toEqual({ skipped: 'not UTF-8' });
  });
});

describe(ReposService.name, () => {
  let directory: string;
  let logged: jest.SpyInstance;

  beforeEach(() => {
    jest.useFakeTimers();
    jest.spyOn(Logger.prototype, 'log').mockImplementation(() => undefined);
    logged = jest.spyOn(Logger.prototype, 'error').mockImplementation(() => undefined);
    directory = mkdtempSync(join(tmpdir(), 'repos-service-'));
  });
  afterEach(() => {
    jest.useRealTimers();
    jest.restoreAllMocks();
    rmSync(directory, { recursive: true, force: true });
  });

  // The watcher fires only when the file changes: a change met by an outage was never applied.
  it('tries an ingest the database refused again after 5 s, doubled per failure up to a minute, until it succeeds', async () => {
    const path = join(directory, 'hf_validation.jsonl');
    writeFileSync(path, `${JSON.stringify({ repo_name: 'alice/x' })}\n`);
    const refused = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), {
      code: 'ECONNREFUSED',
    });
    const replaceNames = jest.fn(() => Promise.resolve(1));
    for (let i = 0; i < 7; i++) replaceNames.mockRejectedValueOnce(refused);
    const service = new ReposService(testConfig({ repos: { hfResultsPath: path } }), {
      replaceNames,
    } as unknown as ReposRepository);
    await service.onApplicationBootstrap();
    try {
      const waits = [5, 10, 20, 40, 60, 60, 60];
      for (const wait of waits) {
        const calls = replaceNames.mock.calls.length;
        await jest.advanceTimersByTimeAsync(wait * 1000 - 1);
        expect(replaceNames).toHaveBeenCalledTimes(calls);
        await jest.advanceTimersByTimeAsync(1);
        expect(replaceNames).toHaveBeenCalledTimes(calls + 1);
      }
      // Applied: nothing more is tried.
      await jest.advanceTimersByTimeAsync(10 * 60_000);
      expect(replaceNames).toHaveBeenCalledTimes(waits.length + 1);
      expect(logged).toHaveBeenCalledWith(
        expect.stringContaining('not applied, keeping the stored ones (tried again in 5 s)'),
      );
      expect(logged).toHaveBeenCalledWith(expect.stringContaining('(tried again in 60 s)'));
    } finally {
      await service.onModuleDestroy();
    }
  });

  // A fresh database, back after refusing the first ingest: the file was never the problem.
  it('says the names are not loaded yet, not that the file failed, while a refused ingest waits for its retry', async () => {
    const path = join(directory, 'hf_validation.jsonl');
    writeFileSync(path, `${JSON.stringify({ repo_name: 'alice/x' })}\n`);
    const refused = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), {
      code: 'ECONNREFUSED',
    });
    const service = new ReposService(testConfig({ repos: { hfResultsPath: path } }), {
      replaceNames: jest.fn(() => Promise.reject(refused)),
      findNamesIngestedFrom: jest.fn(() => Promise.resolve(null)),
    } as unknown as ReposRepository);
    await service.onApplicationBootstrap();
    try {
      // Retry-After: the retry comes within seconds (it said nothing of when to come back).
      await expect(service.listRepoNames()).rejects.toMatchObject({
        response: expect.objectContaining({ message: NAMES_NOT_LOADED }),
        retryAfterSeconds: NOT_READY_RETRY_AFTER_SECONDS,
      });
    } finally {
      await service.onModuleDestroy();
    }
  });

  it('waits at start for the first ingest up to 5 s, then goes on while it carries on', async () => {
    const path = join(directory, 'hf_validation.jsonl');
    writeFileSync(path, `${JSON.stringify({ repo_name: 'alice/x' })}\n`);
    let finish: (count: number) => void = () => undefined;
    const replaceNames = jest.fn(() => new Promise<number>((resolve) => (finish = resolve)));
    const service = new ReposService(testConfig({ repos: { hfResultsPath: path } }), {
      replaceNames,
    } as unknown as ReposRepository);
    let started = false;
    const starting = service.onApplicationBootstrap().then(() => (started = true));
    try {
      await jest.advanceTimersByTimeAsync(4999);
      expect(replaceNames).toHaveBeenCalledTimes(1);
      expect(started).toBe(false);
      await jest.advanceTimersByTimeAsync(1);
      expect(started).toBe(true);
      expect(jest.getTimerCount()).toBe(0);
    } finally {
      finish(1);
      await starting;
      await service.onModuleDestroy();
    }
  });

  it('does not try again a file that is invalid: it is read again when it changes', async () => {
    const path = join(directory, 'hf_validation.jsonl');
    writeFileSync(path, 'not JSON\n');
    const replaceNames = jest.fn(async (_source: string, names: AsyncIterable<string>) => {
      let count = 0;
      for await (const _name of names) count += 1;
      return count;
    });
    const service = new ReposService(testConfig({ repos: { hfResultsPath: path } }), {
      replaceNames,
    } as unknown as ReposRepository);
    await service.onApplicationBootstrap();
    await jest.advanceTimersByTimeAsync(10 * 60_000);
    await service.onModuleDestroy();
    expect(replaceNames).toHaveBeenCalledTimes(1);
    expect(logged).toHaveBeenCalledWith(expect.not.stringContaining('tried again'));
  });

  // HF_RESULTS_PATH=/nonexistent.parquet logged its error twice at start, ~10 ms apart: the
  // watcher called back once for the file missing at its first look, as Node's watchFile does.
  it('reads a file missing at start once, and says so once', async () => {
    jest.useRealTimers();
    const replaceNames = jest.fn(async (_source: string, names: AsyncIterable<string>) => {
      let count = 0;
      for await (const _name of names) count += 1;
      return count;
    });
    const service = new ReposService(
      testConfig({ repos: { hfResultsPath: join(directory, 'absent.parquet') } }),
      { replaceNames } as unknown as ReposRepository,
    );
    await service.onApplicationBootstrap();
    try {
      await new Promise((done) => setTimeout(done, 500));
      expect(replaceNames).toHaveBeenCalledTimes(1);
      expect(logged.mock.calls).toEqual([[expect.stringMatching(/absent\.parquet.*ENOENT/)]]);
    } finally {
      await service.onModuleDestroy();
    }
  });
});
