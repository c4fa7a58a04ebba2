import {
  existsSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createFileOnce } from './create-file-once';

describe(createFileOnce.name, () => {
  let directory: string;
  beforeEach(() => (directory = mkdtempSync(join(tmpdir(), 'create-once-'))));
  afterEach(() => {
    jest.restoreAllMocks();
    rmSync(directory, { recursive: true, force: true });
  });

  const noLinks = () => {
    throw Object.assign(new Error('EPERM: operation not permitted, link'), { code: 'EPERM' });
  };
  const failure = (code: string) => Object.assign(new Error(`${code}: failed`), { code });

  it('creates the file with its content and mode, and leaves nothing beside it', () => {
    const file = join(directory, 'secret');
    expect(createFileOnce(file, 'first\n', 0o600)).toBe(true);
    expect(readFileSync(file, 'utf8')).toBe('first\n');
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(readdirSync(directory)).toEqual(['secret']);
  });

  it('keeps a file another process wrote first, and says so', () => {
    const file = join(directory, 'secret');
    writeFileSync(file, 'theirs\n');
    expect(createFileOnce(file, 'mine\n', 0o600)).toBe(false);
    expect(readFileSync(file, 'utf8')).toBe('theirs\n');
    expect(readdirSync(directory)).toEqual(['secret']);
  });

  it('throws when the directory is missing (callers create it), writing nothing', () => {
    expect(() => createFileOnce(join(directory, 'missing', 'secret'), 'x', 0o600)).toThrow(
      /ENOENT/,
    );
    expect(readdirSync(directory)).toEqual([]);
  });

  it('creates the file once where the file system has no hard links, leaving nothing beside it', () => {
    const file = join(directory, 'secret');
    expect(createFileOnce(file, 'first\n', 0o600, noLinks)).toBe(true);
    expect(createFileOnce(file, 'second\n', 0o600, noLinks)).toBe(false);
    expect(readFileSync(file, 'utf8')).toBe('first\n');
    expect(readdirSync(directory)).toEqual(['secret']);
  });

  it('throws any other failure to link, removing its partial file', () => {
    const failing = () => {
      throw Object.assign(new Error('EIO: i/o error, link'), { code: 'EIO' });
    };
    expect(() => createFileOnce(join(directory, 'secret'), 'x', 0o600, failing)).toThrow(/EIO/);
    expect(readdirSync(directory)).toEqual([]);
  });

  // It created the name exclusively and then wrote it: a full disk (or a crash) in between left
  // an empty master key, which every later start read as the key.
  it('never gives the name to an empty or partial file where the file system has no hard links', () => {
    const file = join(directory, 'secret');
    const fs = jest.requireActual<typeof import('node:fs')>('node:fs');
    const { openSync: open, closeSync: close } = fs;
    // Whatever opens the name itself to write it creates it, then fails before writing.
    jest.spyOn(fs, 'openSync').mockImplementation(((
      path: string,
      flags: import('node:fs').OpenMode,
      mode?: import('node:fs').Mode,
    ) => {
      const descriptor = open(path, flags, mode);
      if (path !== file) return descriptor;
      close(descriptor);
      throw failure('ENOSPC');
    }) as typeof fs.openSync);
    try {
      createFileOnce(file, 'first\n', 0o600, noLinks);
    } catch {
      // The failure may be reported; what the name holds is what matters.
    }
    expect(existsSync(file) ? readFileSync(file, 'utf8') : 'absent').toMatch(/^(first\n|absent)$/);
  });

  it('leaves the name absent when the rename fails where the file system has no hard links', () => {
    const file = join(directory, 'secret');
    const fs = jest.requireActual<typeof import('node:fs')>('node:fs');
    jest.spyOn(fs, 'renameSync').mockImplementation(() => {
      throw failure('EIO');
    });
    expect(() => createFileOnce(file, 'first\n', 0o600, noLinks)).toThrow(/EIO/);
    expect(readdirSync(directory)).toEqual([]);
  });

  it('keeps the file of a process that holds the claim where there are no hard links', () => {
    const file = join(directory, 'secret');
    writeFileSync(`${file}.claim`, '');
    writeFileSync(file, 'theirs\n');
    expect(createFileOnce(file, 'mine\n', 0o600, noLinks)).toBe(false);
    expect(readFileSync(file, 'utf8')).toBe('theirs\n');
  });

  it('refuses, naming the claim, when a claim is left without the file', () => {
    const file = join(directory, 'secret');
    writeFileSync(`${file}.claim`, '');
    expect(() => createFileOnce(file, 'mine\n', 0o600, noLinks)).toThrow(
      `${file}.claim exists but ${file} does not`,
    );
    expect(readdirSync(directory)).toEqual(['secret.claim']);
  });
});
