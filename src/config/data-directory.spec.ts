import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { StartupError } from '../common/lifecycle/startup-failure';
import { checkDataDirectory } from './data-directory';

describe(checkDataDirectory.name, () => {
  let scratch: string;
  beforeEach(() => (scratch = mkdtempSync(join(tmpdir(), 'gateway-data-dir-'))));
  afterEach(() => rmSync(scratch, { recursive: true, force: true }));

  it('makes the datasets directory and leaves nothing else in it', async () => {
    const dataDir = join(scratch, 'new', 'data');
    await checkDataDirectory(dataDir);
    expect(readdirSync(join(dataDir, 'datasets'))).toEqual([]);
  });

  // It runs first at every start: a folder it made world-readable stayed so, whatever mode the
  // dataset writer asked of it later (a review). The folders above it are made as `mkdir -p`
  // makes them: DATA_DIR made 0750 kept the embedded Postgres, run as another user, from its
  // data, and `npm start` as root failed on every fresh checkout (a cold-start audit).
  it('makes the datasets folder for owner and group only, the folders above it as the umask gives', async () => {
    const dataDir = join(scratch, 'new', 'data');
    const previous = process.umask(0o022);
    try {
      await checkDataDirectory(dataDir);
    } finally {
      process.umask(previous);
    }
    const mode = (folder: string) => statSync(folder).mode & 0o777;
    expect([join(scratch, 'new'), dataDir].map(mode)).toEqual([0o755, 0o755]);
    expect(mode(join(dataDir, 'datasets'))).toBe(0o750);
  });

  it('refuses a DATA_DIR that is a file, naming it and why', async () => {
    const file = join(scratch, 'a-file');
    writeFileSync(file, '');
    const refusal = checkDataDirectory(file);
    await expect(refusal).rejects.toBeInstanceOf(StartupError);
    await expect(refusal).rejects.toThrow(
      `Startup failed: DATA_DIR=${file}: cannot write datasets under it (ENOTDIR)`,
    );
  });

  // procfs answers ENOENT to a new directory in a directory that exists: Node's recursive mkdir
  // took it for a missing parent and retried forever, and the start hung.
  it('refuses at once a DATA_DIR under /proc, saying its parent takes no new directories', async () => {
    const dataDir = '/proc/self/gateway-data';
    await expect(checkDataDirectory(dataDir)).rejects.toThrow(
      `Startup failed: DATA_DIR=${dataDir}: cannot write datasets under it (ENOENT: /proc/self ` +
        'takes no new directories: a pseudo file system such as /proc, or a broken link?)',
    );
  }, 5_000);

  // A FIFO without a reader stands in for a network mount that does not answer: the write probe's
  // open waits for ever.
  it('refuses a DATA_DIR that does not answer, within the time it is given', async () => {
    mkdirSync(join(scratch, 'datasets'));
    execFileSync('mkfifo', [join(scratch, 'datasets', `.write-check-${process.pid}`)]);
    await expect(checkDataDirectory(scratch, 300)).rejects.toThrow(
      `Startup failed: DATA_DIR=${scratch}: cannot write datasets under it (no answer within ` +
        '0.3 s: an unreachable network mount?)',
    );
  }, 5_000);
});
