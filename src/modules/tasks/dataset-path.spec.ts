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

  // On a file system that ignores case (macOS', Windows', SMB shares), `Tao-X` and `tao-x` were
  // one file: one task's download served the other's bytes under its own hash (an audit's finding).
  it('names ids that differ only in case apart, even where file names ignore case', () => {
    const ids = ['tao-x', 'Tao-X', 'TAO-X', 'tAo-x', 'é-X', 'sha256'.toUpperCase()];
    const names = ids.map((id) => basename(datasetPath('/srv/data', id)).toLowerCase());
    expect(new Set(names).size).toBe(ids.length);
    expect(datasetPath('/srv/data', 'tao-x')).toBe('/srv/data/datasets/tao-x.jsonl.gz');
    expect(datasetPath('/srv/data', 'Tao-X')).toBe(
      `/srv/data/datasets/Tao-X=${digest('Tao-X').slice(0, 16)}.jsonl.gz`,
    );
    // Letters that are not ASCII are percent-encoded, so their case is no part of the name.
    expect(datasetPath('/srv/data', 'É-x')).toBe('/srv/data/datasets/%C3%89-x.jsonl.gz');
  });

  it('names an upper-case id by its digest alone when the name and its suffix are over 255 bytes', () => {
    // 168 + 2 bytes, and 17 for `=<hex>`: the longest name that fits (187 + 68).
    const fits = `${'é'.repeat(28)}AB`;
    expect(Buffer.byteLength(longestName(datasetPath('/srv/data', fits)))).toBe(255);
    const over = `${fits}C`;
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
