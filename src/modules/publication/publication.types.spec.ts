import { publishableJobs, publishedFile, retryDelay } from './publication.types';

describe(retryDelay.name, () => {
  it('doubles the first wait per failure, up to the longest', () => {
    expect([0, 1, 2, 3, 10, 1000].map((attempts) => retryDelay(attempts, 12_000, 60_000))).toEqual([
      12_000, 24_000, 48_000, 60_000, 60_000, 60_000,
    ]);
  });
});

describe(publishedFile.name, () => {
  it('writes the jobs as the subnet’s uploader does: indented by four spaces, no newline at the end', () => {
    const file = publishedFile([{ id: 'a', weight: 1, params: { platform: 'x', label: '#tao' } }]);
    expect(file).toBe(
      '[\n    {\n        "id": "a",\n        "weight": 1,\n        "params": {\n' +
        '            "platform": "x",\n            "label": "#tao"\n        }\n    }\n]',
    );
    expect(publishedFile([])).toBe('[]');
  });
});

describe(publishableJobs.name, () => {
  it('keeps keyword-only jobs (no label) out of the published vote, by id, in order', () => {
    const jobs = [
      { id: 'tao', params: { label: '#tao', keyword: null } },
      { id: 'halving', params: { label: null, keyword: 'halving' } },
      { id: 'btc', params: { label: 'r/bitcoin', keyword: 'etf' } },
      { id: 'merge', params: { label: null, keyword: 'merge' } },
    ];
    const { published, keptLocal } = publishableJobs(jobs);
    expect(published.map((job) => job.id)).toEqual(['tao', 'btc']);
    expect(keptLocal).toEqual(['halving', 'merge']);
  });
});
