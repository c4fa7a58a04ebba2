import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { diskSpace } from './task-metrics';

describe(diskSpace.name, () => {
  it('gives the free and total bytes of the file system a path is on', async () => {
    const { free, total } = await diskSpace(tmpdir());
    expect(total).toBeGreaterThan(0);
    expect(free).toBeGreaterThan(0);
    expect(free).toBeLessThanOrEqual(total);
  });

  // The datasets directory is made at the first compile: a scrape before it read nothing (the
  // fresh-clone CI's first run).
  it('reads a path not made yet at its nearest existing parent', async () => {
    const parent = await diskSpace(tmpdir());
    const unmade = await diskSpace(join(tmpdir(), 'not-made-yet', 'datasets'));
    expect(unmade.total).toBe(parent.total);
    expect(unmade.free).toBeGreaterThan(0);
  });
});
