import { StartupError } from '../../common/lifecycle/startup-failure';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig } from '../../config/load-config';
import { loadDefaultDesirabilities } from './default-desirabilities';

describe(loadDefaultDesirabilities.name, () => {
  let directory: string;
  beforeAll(() => (directory = mkdtempSync(join(tmpdir(), 'default-desirabilities-'))));
  afterAll(() => rmSync(directory, { recursive: true, force: true }));

  function file(content: string): string {
    const path = join(directory, `list-${Math.random().toString(36).slice(2)}.json`);
    writeFileSync(path, content);
    return path;
  }

  it('loads the list shipped with the project, normalized', async () => {
    const jobs = await loadDefaultDesirabilities(loadConfig({}).defaultDesirabilitiesFile);
    expect(jobs.length).toBeGreaterThanOrEqual(5);
    expect(new Set(jobs.map((job) => job.params.platform))).toEqual(new Set(['x', 'reddit']));
    expect(jobs.reduce((sum, job) => sum + job.weight, 0)).toBeCloseTo(1, 12);
  });

  it('accepts the legacy format too', async () => {
    const jobs = await loadDefaultDesirabilities(
      file('[{"source_name": "reddit", "label_weights": {"/r/Bitcoin": 2}}]'),
    );
    expect(jobs).toEqual([
      expect.objectContaining({
        weight: 1,
        params: expect.objectContaining({ label: 'r/bitcoin' }),
      }),
    ]);
  });

  it('refuses a file that is missing, not JSON, or breaks the rules, saying where', async () => {
    const missing = loadDefaultDesirabilities(join(directory, 'absent.json'));
    // A StartupError: printed as its lines, without a stack.
    await expect(missing).rejects.toBeInstanceOf(StartupError);
    await expect(missing).rejects.toThrow(
      /^Startup failed: DEFAULT_DESIRABILITIES_FILE .*cannot be read/,
    );
    await expect(loadDefaultDesirabilities(file('[{'))).rejects.toThrow(/is not valid JSON/);
    await expect(
      loadDefaultDesirabilities(
        file('[{"id": "a", "weight": 1, "params": {"platform": "x", "label": "tao"}}]'),
      ),
    ).rejects.toThrow(/\[0\]\.params\.label: Value error, X labels are hashtags/);
  });
});
