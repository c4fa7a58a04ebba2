import {
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as createOnce from '../common/files/create-file-once';
import { resolveMasterKey } from './master-key';

describe(resolveMasterKey.name, () => {
  let dataDir: string;
  beforeEach(() => (dataDir = mkdtempSync(join(tmpdir(), 'master-key-'))));
  afterEach(() => {
    jest.restoreAllMocks();
    rmSync(dataDir, { recursive: true, force: true });
  });

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

  // The file holds the admin key: other users of the machine must not read it.
  it('writes the generated key readable by its owner only', () => {
    const { file } = resolveMasterKey(undefined, join(dataDir, 'data'));
    expect(statSync(file!).mode & 0o777).toBe(0o600);
  });

  // Two replicas starting together on a shared DATA_DIR: both found no file, one wrote first.
  it('takes the key another process wrote between its check and its write', () => {
    const data = join(dataDir, 'data');
    mkdirSync(data);
    const create = jest.spyOn(createOnce, 'createFileOnce').mockImplementation((path) => {
      writeFileSync(path, 'sk_master_theirs\n');
      return false;
    });
    expect(resolveMasterKey(undefined, data)).toEqual({
      key: 'sk_master_theirs',
      file: join(data, 'master-key'),
      created: false,
    });
    expect(create).toHaveBeenCalledTimes(1);
  });

  it('uses MASTER_KEY when it is set, writing nothing', () => {
    expect(resolveMasterKey('sk_master_set', dataDir)).toEqual({
      key: 'sk_master_set',
      created: false,
    });
    expect(readdirSync(dataDir)).toEqual([]);
  });
});
