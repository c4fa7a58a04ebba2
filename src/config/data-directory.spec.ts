import { mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
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

  it('refuses a DATA_DIR that is a file, naming it and why', async () => {
    const file = join(scratch, 'a-file');
    writeFileSync(file, '');
    const refusal = checkDataDirectory(file);
    await expect(refusal).rejects.toBeInstanceOf(StartupError);
    await expect(refusal).rejects.toThrow(
      `Startup failed: DATA_DIR=${file}: cannot write datasets under it (ENOTDIR)`,
    );
  });
});
