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

  it('throws what is not an existing name, leaving nothing behind', () => {
    expect(() => createFileOnce(join(directory, 'missing', 'secret'), 'x', 0o600)).toThrow(
      /ENOENT/,
    );
    expect(readdirSync(directory)).toEqual([]);
  });
});
