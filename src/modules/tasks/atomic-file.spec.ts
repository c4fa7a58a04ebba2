import {
  existsSync,
  lutimesSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readlinkSync,
  realpathSync,
  rmSync,
  symlinkSync,
  utimesSync,
  writeFileSync,
} from 'node:fs';
import * as fs from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { removeStalePartials, STALE_PARTIAL_MS, writeFileAtomically } from './atomic-file';

describe(removeStalePartials.name, () => {
  let directory: string;
  beforeEach(() => (directory = mkdtempSync(join(tmpdir(), 'atomic-file-'))));
  afterEach(() => rmSync(directory, { recursive: true, force: true }));

  it('removes the partials no writer touched for an hour, of any file, and nothing else', async () => {
    const old = new Date(Date.now() - STALE_PARTIAL_MS - 60_000);
    const files = {
      crashed: 'task.jsonl.gz.1b4e28ba-2fa1-11d2-883f-0016d3cca427.partial',
      legacy: 'task.jsonl.gz.partial',
      crashedManifest: 'task.jsonl.gz.manifest.json.5c2e4f9a-0b1d-4c3e-9f8a-7d6e5c4b3a21.partial',
      live: 'task.jsonl.gz.9f1c7a52-3d4e-4b6f-8a9b-0c1d2e3f4a5b.partial',
      otherTask: 'task2.parquet.1b4e28ba-2fa1-11d2-883f-0016d3cca427.partial',
      dataset: 'task.jsonl.gz',
      manifest: 'task.jsonl.gz.manifest.json',
    };
    for (const [role, name] of Object.entries(files)) {
      writeFileSync(join(directory, name), role);
      if (role !== 'live') utimesSync(join(directory, name), old, old);
    }
    await removeStalePartials(directory, new Date());
    expect(readdirSync(directory).sort()).toEqual(
      [files.live, files.dataset, files.manifest].sort(),
    );
  });

  // Writers write as they go, but a page of rows can take minutes on a busy database.
  it('keeps a partial last written to 59 minutes ago: its writer may still be on it', async () => {
    const name = 'task.jsonl.gz.1b4e28ba-2fa1-11d2-883f-0016d3cca427.partial';
    const recent = new Date(Date.now() - 59 * 60_000);
    writeFileSync(join(directory, name), 'rows so far');
    utimesSync(join(directory, name), recent, recent);
    await removeStalePartials(directory, new Date());
    expect(readdirSync(directory)).toEqual([name]);
  });

  // `rm` failed on a directory named so at every pass (EISDIR), and the partials sorted after
  // it were never removed (a filesystem faults audit).
  it('leaves a directory named like a partial alone, and removes the partials sorted after it', async () => {
    const old = new Date(Date.now() - STALE_PARTIAL_MS - 60_000);
    const crashed = 'task.jsonl.gz.1b4e28ba-2fa1-11d2-883f-0016d3cca427.partial';
    mkdirSync(join(directory, 'odd.partial'));
    writeFileSync(join(directory, crashed), 'rows');
    for (const name of ['odd.partial', crashed]) utimesSync(join(directory, name), old, old);
    await removeStalePartials(directory, new Date());
    expect(readdirSync(directory)).toEqual(['odd.partial']);
  });

  it('goes on past a partial it cannot remove, and throws the first failure at the end', async () => {
    const old = new Date(Date.now() - STALE_PARTIAL_MS - 60_000);
    const names = ['a.partial', 'b.partial', 'c.partial'];
    for (const name of names) {
      writeFileSync(join(directory, name), 'rows');
      utimesSync(join(directory, name), old, old);
    }
    // The module itself: `import * as` gives a copy of its functions, which the code never calls.
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const promises = require('node:fs/promises') as typeof fs;
    const rm = promises.rm;
    const refused = Object.assign(new Error('EACCES: permission denied'), { code: 'EACCES' });
    jest
      .spyOn(promises, 'rm')
      .mockImplementation((path, options) =>
        String(path).endsWith('a.partial') ? Promise.reject(refused) : rm(path, options),
      );
    try {
      await expect(removeStalePartials(directory, new Date())).rejects.toBe(refused);
    } finally {
      jest.restoreAllMocks();
    }
    expect(readdirSync(directory)).toEqual(['a.partial']);
  });

  it('removes a stale link named like a partial, not the file it names', async () => {
    const old = new Date(Date.now() - STALE_PARTIAL_MS - 60_000);
    writeFileSync(join(directory, 'target'), 'kept');
    symlinkSync(join(directory, 'target'), join(directory, 'link.partial'));
    lutimesSync(join(directory, 'link.partial'), old, old);
    await removeStalePartials(directory, new Date());
    expect(readdirSync(directory)).toEqual(['target']);
  });

  it('does nothing when the directory does not exist yet', async () => {
    await expect(removeStalePartials(join(directory, 'none'), new Date())).resolves.toBeUndefined();
  });
});

describe(writeFileAtomically.name, () => {
  let directory: string;
  beforeEach(() => (directory = mkdtempSync(join(tmpdir(), 'atomic-write-'))));
  afterEach(() => {
    jest.restoreAllMocks();
    rmSync(directory, { recursive: true, force: true });
  });

  // Datasets hold third parties' posts, names and profiles: not for every local user of the host
  // to read (they came out 0644 in a 0755 folder: a privacy audit).
  it('writes the file and the folders it makes readable by owner and group only', async () => {
    const path = join(directory, 'datasets', 'task.jsonl.gz');
    const previous = process.umask(0o022);
    try {
      await writeFileAtomically(path, async (output) => void output.end('rows'));
    } finally {
      process.umask(previous);
    }
    expect((await fs.stat(path)).mode & 0o777).toBe(0o640);
    expect((await fs.stat(join(directory, 'datasets'))).mode & 0o777).toBe(0o750);
  });

  // Durability cannot be watched without pulling the power: what is flushed, and when, can.
  // (A handle's path is read from /proc: these tests run on Linux.)
  it('flushes the file, renames it into place, then flushes the directory, before it returns', async () => {
    const path = join(directory, 'task.jsonl.gz');
    const probe = await fs.open(directory, 'r');
    const fileHandle = Object.getPrototypeOf(probe) as { sync(): Promise<void> };
    await probe.close();
    const synced: { path: string; renamed: boolean }[] = [];
    const sync = fileHandle.sync;
    jest.spyOn(fileHandle, 'sync').mockImplementation(async function (this: fs.FileHandle) {
      synced.push({ path: readlinkSync(`/proc/self/fd/${this.fd}`), renamed: existsSync(path) });
      return sync.call(this);
    });

    const written = await writeFileAtomically(path, async (output) => {
      output.end('rows');
    });

    expect(written.bytes).toBe(4);
    expect(synced).toEqual([
      { path: expect.stringMatching(/\/task\.jsonl\.gz\.[0-9a-f-]{36}\.partial$/), renamed: false },
      { path: realpathSync(directory), renamed: true },
    ]);
    expect(readdirSync(directory)).toEqual(['task.jsonl.gz']);
  });
});
