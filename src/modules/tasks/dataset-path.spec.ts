import { createHash } from 'node:crypto';
import { basename } from 'node:path';
import { datasetPath } from './dataset-path';

const digest = (id: string) => createHash('sha256').update(id).digest('hex');

/** The manifest's partial file: the longest name written beside a dataset (atomic-file.ts). */
const longestName = (path: string) =>
  `${basename(path)}.manifest.json.1b4e28ba-2fa1-11d2-883f-0016d3cca427.partial`;

describe(datasetPath.name, () => {
  it('names the files by the id percent-encoded, so that no id leaves the datasets directory', () => {
    expect(datasetPath('/srv/data', '../../etc/passwd')).toBe(
      '/srv/data/datasets/..%2F..%2Fetc%2Fpasswd.jsonl.gz',
    );
    expect(datasetPath('/srv/data', 'tao x=1')).toBe('/srv/data/datasets/tao%20x%3D1.jsonl.gz');
  });

  // `é` encodes to 6 bytes: 31 of them and one `a` make the longest name that fits (187 + 68).
  it('keeps the name of an id whose longest file name is 255 bytes, and names one a byte longer by its digest', () => {
    const fits = `${'é'.repeat(31)}a`;
    const path = datasetPath('/srv/data', fits);
    expect(path).toBe(`/srv/data/datasets/${encodeURIComponent(fits)}.jsonl.gz`);
    expect(Buffer.byteLength(longestName(path))).toBe(255);

    const over = `${fits}b`;
    expect(datasetPath('/srv/data', over)).toBe(
      `/srv/data/datasets/sha256=${digest(over)}.jsonl.gz`,
    );
  });

  it('names an id of 80 characters that would encode past 255 bytes by its digest', () => {
    const id = '🚀'.repeat(80);
    const path = datasetPath('/srv/data', id);
    expect(path).toBe(`/srv/data/datasets/sha256=${digest(id)}.jsonl.gz`);
    expect(Buffer.byteLength(longestName(path))).toBeLessThanOrEqual(255);
  });
});
