import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { resolveMasterKey } from './master-key';

describe(resolveMasterKey.name, () => {
  let dataDir: string;
  beforeEach(() => (dataDir = mkdtempSync(join(tmpdir(), 'master-key-'))));
  afterEach(() => rmSync(dataDir, { recursive: true, force: true }));

  it('generates a key once per data directory and reads it back afterwards', () => {
    const first = resolveMasterKey(undefined, join(dataDir, 'data'));
    expect(first.created).toBe(true);
    expect(first.key).toMatch(/^sk_master_/);
    expect(readFileSync(first.file!, 'utf8')).toBe(`${first.key}\n`);
    expect(resolveMasterKey(undefined, join(dataDir, 'data'))).toEqual({
      ...first,
      created: false,
    });
  });

  it('uses MASTER_KEY when it is set, writing nothing', () => {
    expect(resolveMasterKey('sk_master_set', dataDir)).toEqual({
      key: 'sk_master_set',
      created: false,
    });
  });
});
