import {
  chmodSync,
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
import { StartupError } from '../common/lifecycle/startup-failure';
import { masterKeyShown, resolveMasterKey } from './master-key';

// A plain copy of the module, whose exports a test can spy on: the transform's CommonJS
// exports are read-only getters (docs/decisions.md, "Test tiers").
jest.mock('../common/files/create-file-once', () => ({
  __esModule: true,
  ...jest.requireActual<object>('../common/files/create-file-once'),
}));

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
    expect(first.unshown).toBe(false);
    expect(first.key).toMatch(/^sk_master_/);
    expect(readFileSync(first.file!, 'utf8')).toBe(`${first.key}\n`);
    masterKeyShown(first);
    expect(resolveMasterKey(undefined, join(dataDir, 'data'))).toEqual({
      ...first,
      created: false,
      exposed: false,
    });
  });

  // A start that fails after generating the key (a missing wallet hotkey, a busy port) never
  // printed it, and the next said only where it is saved: no start ever showed it.
  it('has the next start show a generated key until a start has shown it, keeping the file', () => {
    const data = join(dataDir, 'data');
    const first = resolveMasterKey(undefined, data);
    const next = resolveMasterKey(undefined, data);
    expect(next).toEqual({ ...first, created: false, unshown: true, exposed: false });
    masterKeyShown(next);
    expect(resolveMasterKey(undefined, data)).toEqual({
      ...first,
      created: false,
      unshown: false,
      exposed: false,
    });
    expect(readdirSync(data)).toEqual(['master-key']);
    expect(readFileSync(first.file!, 'utf8')).toBe(`${first.key}\n`);
  });

  // The file holds the admin key: other users of the machine must not read it.
  it('writes the generated key readable by its owner only', () => {
    const { file } = resolveMasterKey(undefined, join(dataDir, 'data'));
    expect(statSync(file!).mode & 0o777).toBe(0o600);
  });

  // Copied in with its mode kept (0644), nothing said so (a filesystem faults audit).
  it('says when an existing key file may be read by other users', () => {
    const first = resolveMasterKey(undefined, join(dataDir, 'data'));
    chmodSync(first.file!, 0o644);
    expect(resolveMasterKey(undefined, join(dataDir, 'data')).exposed).toBe(true);
  });

  // Two replicas starting together on a shared DATA_DIR: both found no file, one wrote first.
  it('takes the key another process wrote between its check and its write', () => {
    const data = join(dataDir, 'data');
    mkdirSync(data);
    const create = jest.spyOn(createOnce, 'createFileOnce').mockImplementation((path) => {
      writeFileSync(path, 'sk_master_theirs\n');
      return false;
    });
    // Its banner is the other process's to show.
    expect(resolveMasterKey(undefined, data)).toEqual({
      key: 'sk_master_theirs',
      file: join(data, 'master-key'),
      created: false,
      unshown: false,
    });
    expect(create).toHaveBeenCalledTimes(1);
  });

  // A full disk failed the start with a stack naming no file (a filesystem faults audit); a
  // DATA_DIR under a file fails the write as surely.
  it('says in one line which file it could not write, and why, when the key cannot be', () => {
    const blocked = join(dataDir, 'a-file');
    writeFileSync(blocked, '');
    expect(() => resolveMasterKey(undefined, join(blocked, 'data'))).toThrow(
      new StartupError(
        `Startup failed: cannot write the master key file ${join(blocked, 'data', 'master-key')} ` +
          '(ENOTDIR): free space or fix DATA_DIR, or set MASTER_KEY',
      ),
    );
  });

  it('uses MASTER_KEY when it is set, writing nothing', () => {
    expect(resolveMasterKey('sk_master_set', dataDir)).toEqual({
      key: 'sk_master_set',
      created: false,
      unshown: false,
    });
    expect(readdirSync(dataDir)).toEqual([]);
  });

  // An operator review: an empty file failed deep in the app with an internal error and a stack,
  // `abc` was taken as the key, and a directory failed with EISDIR and a stack, none naming it.
  describe('refuses, in one line naming the file and what to do, an existing file', () => {
    const refusal = (file: string, problem: string) =>
      `Startup failed: ${problem.replace('FILE', file)} (it stands for MASTER_KEY, which is ` +
      'unset): correct it, delete it to have a new key generated at the next start, or set ' +
      'MASTER_KEY';

    function refusedWith(data: string): StartupError {
      try {
        resolveMasterKey(undefined, data);
      } catch (error) {
        expect(error).toBeInstanceOf(StartupError);
        expect((error as Error).message).toMatch(/^[^\n]+$/);
        return error as StartupError;
      }
      throw new Error('the master key was resolved');
    }

    it.each([
      ['empty', '', 'the master key file FILE is empty'],
      ['of line breaks alone', '\n\n', 'the master key file FILE is empty'],
      [
        'too short for MASTER_KEY',
        'abc\n',
        'the master key in FILE must be at least 16 characters (use a long random value)',
      ],
      [
        'of two lines',
        'sk_master_0123456789\nsk_master_9876543210\n',
        'the master key in FILE must be printable ASCII, as an HTTP ' + 'header carries it',
      ],
    ])('%s, leaving it as it was and never quoting it', (_, content, problem) => {
      const file = join(dataDir, 'master-key');
      writeFileSync(file, content);
      const error = refusedWith(dataDir);
      expect(error.message).toBe(refusal(file, problem));
      for (const line of content.split('\n').filter((text) => text.length > 2))
        expect(error.message).not.toContain(line);
      expect(readFileSync(file, 'utf8')).toBe(content);
    });

    it('that is a directory, leaving it there', () => {
      const file = join(dataDir, 'master-key');
      mkdirSync(file);
      expect(refusedWith(dataDir).message).toBe(
        refusal(file, 'cannot read the master key file FILE (EISDIR)'),
      );
      expect(statSync(file).isDirectory()).toBe(true);
    });

    it('written by another process between its check and its write', () => {
      const create = jest.spyOn(createOnce, 'createFileOnce').mockImplementation((path) => {
        writeFileSync(path, '');
        return false;
      });
      expect(refusedWith(dataDir).message).toBe(
        refusal(join(dataDir, 'master-key'), 'the master key file FILE is empty'),
      );
      expect(create).toHaveBeenCalledTimes(1);
    });
  });
});
