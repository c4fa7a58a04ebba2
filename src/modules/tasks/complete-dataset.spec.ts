import { createHash } from 'node:crypto';
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Logger } from '@nestjs/common';
import * as atomicFile from './atomic-file';
import { keepCompleteDataset, setAsideVouched, vouchedDataset } from './complete-dataset';
import { parquetPathBeside } from './dataset-parquet';
import { manifestPathOf } from './dataset-writer';

// setAside passes through, unless a test makes it fail (a module's exports cannot be spied on).
jest.mock('./atomic-file', () => {
  const actual = jest.requireActual<typeof atomicFile>('./atomic-file');
  return { ...actual, setAside: jest.fn(actual.setAside) };
});

const NOW = new Date('2026-12-06T16:40:05.123Z');

describe(`${vouchedDataset.name} and ${setAsideVouched.name}`, () => {
  let directory: string;
  let path: string;
  beforeEach(() => {
    directory = mkdtempSync(join(tmpdir(), 'complete-dataset-'));
    path = join(directory, 'tao-x.jsonl.gz');
  });
  afterEach(() => rmSync(directory, { recursive: true, force: true }));

  const writeDataset = (manifest: object | string) => {
    writeFileSync(path, 'rows');
    writeFileSync(parquetPathBeside(path), 'PAR1');
    writeFileSync(
      manifestPathOf(path),
      typeof manifest === 'string' ? manifest : JSON.stringify(manifest),
    );
  };
  const vouching = {
    task_id: 'tao-x',
    rows: 2,
    bytes: 4,
    sha256: createHash('sha256').update('rows').digest('hex'),
  };

  it('sets aside the three files of a dataset its manifest vouches for', async () => {
    writeDataset(vouching);
    const vouched = await vouchedDataset('tao-x', path);
    expect(vouched).toMatchObject({ rows: 2, sha256: vouching.sha256 });
    const aside = await setAsideVouched(vouched!, path, NOW);
    const names = aside!.kept.map((file) => file.slice(directory.length + 1));
    expect(
      names.map((name) => name.replace(/\.replaced-20261206T164005Z-[0-9a-f]{8}$/, '')),
    ).toEqual(['tao-x.jsonl.gz', 'tao-x.jsonl.gz.manifest.json', 'tao-x.parquet']);
    expect(readdirSync(directory)).toHaveLength(3);
  });

  // Two set-asides in one second (two compiles of one task) renamed the second over the first.
  it('never names a set-aside copy as an earlier one: a second in the same second keeps both', async () => {
    writeDataset(vouching);
    await setAsideVouched((await vouchedDataset('tao-x', path))!, path, NOW);
    writeDataset(vouching);
    await setAsideVouched((await vouchedDataset('tao-x', path))!, path, NOW);
    expect(readdirSync(directory)).toHaveLength(6);
  });

  // Hashed outside the task row's lock, the file may be another by the time it is set aside.
  it('sets nothing aside when another file took the place of the one vouched for', async () => {
    writeDataset(vouching);
    const vouched = (await vouchedDataset('tao-x', path))!;
    rmSync(path);
    writeFileSync(path, 'rows');
    expect(await setAsideVouched(vouched, path, NOW)).toBeUndefined();
    expect(readdirSync(directory).some((name) => name.includes('.replaced-'))).toBe(false);
  });

  // A crashed attempt's files: written over by the compile, as before.
  it.each([
    ['no manifest', undefined],
    ['a manifest that is no JSON', '{"task_id": "tao-x", '],
    ["another task's manifest", { ...vouching, task_id: 'btc-x' }],
    ['a manifest of another size', { ...vouching, bytes: 5 }],
    ['a manifest of other bytes', { ...vouching, sha256: '0'.repeat(64) }],
    // undefined === undefined passed both checks, and the manifest alone was set aside.
    ['a manifest without size and hash, and no file', { task_id: 'tao-x', rows: 2 }],
  ])('leaves the files where they are with %s', async (_case, manifest) => {
    if (manifest === undefined) writeFileSync(path, 'rows');
    else writeDataset(manifest);
    if (_case.endsWith('no file')) rmSync(path);
    const before = readdirSync(directory).sort();
    expect(await vouchedDataset('tao-x', path)).toBeUndefined();
    expect(readdirSync(directory).sort()).toEqual(before);
  });

  // A failure part way was counted, but no line named what had been moved (a review).
  it('names what it moved when the set-aside fails part way, and fails with the cause', async () => {
    writeDataset(vouching);
    const vouched = (await vouchedDataset('tao-x', path))!;
    const actual = jest.requireActual<typeof atomicFile>('./atomic-file').setAside;
    const full = Object.assign(new Error('ENOSPC: no space left on device'), { code: 'ENOSPC' });
    jest.mocked(atomicFile.setAside).mockImplementationOnce(actual).mockRejectedValueOnce(full);
    const logger = { warn: jest.fn() } as unknown as Logger;
    await expect(keepCompleteDataset(logger, 'tao-x', path, vouched, NOW)).rejects.toBe(full);
    expect(jest.mocked(logger.warn).mock.calls).toEqual([
      [
        { task_id: 'tao-x' },
        expect.stringMatching(
          /kept as tao-x\.jsonl\.gz\.replaced-20261206T164005Z-[0-9a-f]{8}; the rest could not be moved \(ENOSPC\)$/,
        ),
      ],
    ]);
  });
});
