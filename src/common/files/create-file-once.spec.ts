import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createFileOnce } from './create-file-once';

describe(createFileOnce.name, () => {
  let directory: string;
  beforeEach(() => (directory = mkdtempSync(join(tmpdir(), 'create-once-'))));
  afterEach(() => rmSync(directory, { recursive: true, force: true }));

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

  it('creates the file exclusively where the file system has no hard links, leaving nothing beside it', () => {
    const file = join(directory, 'secret');
    const noLinks = () => {
      throw Object.assign(new Error('EPERM: operation not permitted, link'), { code: 'EPERM' });
    };
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
});
