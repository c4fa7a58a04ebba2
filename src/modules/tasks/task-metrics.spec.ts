import { tmpdir } from 'node:os';
import { diskSpace } from './task-metrics';

describe(diskSpace.name, () => {
  it('gives the free and total bytes of the file system a path is on', async () => {
    const { free, total } = await diskSpace(tmpdir());
    expect(total).toBeGreaterThan(0);
    expect(free).toBeGreaterThan(0);
    expect(free).toBeLessThanOrEqual(total);
  });

  it('fails for a path that does not exist, so that the scrape keeps its last values', async () => {
    await expect(diskSpace('/nonexistent/datasets')).rejects.toThrow(/ENOENT/);
  });
});
