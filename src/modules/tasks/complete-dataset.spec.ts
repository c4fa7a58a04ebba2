import { createHash } from 'node:crypto';
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setAsideCompleteDataset } from './complete-dataset';
import { parquetPathBeside } from './dataset-parquet';
import { manifestPathOf } from './dataset-writer';

const NOW = new Date('2026-12-06T16:40:05.123Z');

describe(setAsideCompleteDataset.name, () => {
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
    expect(await setAsideCompleteDataset('tao-x', path, NOW)).toEqual({
      rows: 2,
      sha256: vouching.sha256,
      kept: [
        'tao-x.jsonl.gz.replaced-20261206T164005Z',
        'tao-x.parquet.replaced-20261206T164005Z',
        'tao-x.jsonl.gz.manifest.json.replaced-20261206T164005Z',
      ].map((name) => join(directory, name)),
    });
    expect(readdirSync(directory)).toHaveLength(3);
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
    expect(await setAsideCompleteDataset('tao-x', path, NOW)).toBeUndefined();
    expect(readdirSync(directory).sort()).toEqual(before);
  });
});
