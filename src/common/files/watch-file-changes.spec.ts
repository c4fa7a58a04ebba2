import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { firstLookAtMissing } from '../../../test/support/first-look';
import { until } from '../../../test/support/until';
import { watchFileChanges } from './watch-file-changes';

describe(watchFileChanges.name, () => {
  let directory: string;
  beforeEach(() => (directory = mkdtempSync(join(tmpdir(), 'watch-file-changes-'))));
  afterEach(() => rmSync(directory, { recursive: true, force: true }));

  it('says nothing of a file missing from the start, then each time it is made and removed', async () => {
    const path = join(directory, 'file.json');
    const changed = jest.fn();
    const stop = watchFileChanges(path, 20, changed);
    const looked = firstLookAtMissing(path);
    try {
      // Its first look, which called the listener for the missing file (a fixed 300 ms could end
      // before it on a loaded machine: the file made next was then the original, never a change).
      await looked;
      expect(changed).not.toHaveBeenCalled();

      writeFileSync(path, '{}');
      await until(() => Promise.resolve(changed.mock.calls.length === 1 || undefined), 10_000);
      rmSync(path);
      await until(() => Promise.resolve(changed.mock.calls.length === 2 || undefined), 10_000);
    } finally {
      stop();
    }
  });
});
