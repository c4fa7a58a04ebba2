import {
  publicationDisabled,
  publishableJobs,
  publishedFile,
  retryDelay,
} from './publication.types';

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

describe(publicationDisabled.name, () => {
  const subtensor = { url: 'wss://node.example:443', syncIntervalMs: 1, timeoutMs: 1 };
  const settings = (repoUrl: string | undefined, token?: string, chain = true) =>
    ({
      gravity: { repoUrl, branch: 'main', token },
      network: { subtensor: chain ? subtensor : undefined },
    }) as unknown as Parameters<typeof publicationDisabled>[0];

  it('publishes with an https repository and its token, an ssh repository or a file', () => {
    expect(
      publicationDisabled(settings('https://github.com/o/r', 'ghp_0123456789')),
    ).toBeUndefined();
    expect(publicationDisabled(settings('ssh://git@github.com/o/r.git'))).toBeUndefined();
    expect(publicationDisabled(settings('file:///srv/gravity.git'))).toBeUndefined();
  });

  it('does not publish, saying so as a misconfiguration, to an https repository without a token', () => {
    expect(publicationDisabled(settings('https://github.com/o/r'))).toEqual({
      reason:
        'GRAVITY_TOKEN not set, and an https:// GRAVITY_REPO_URL cannot be pushed to without it (set a token with write access, or use an ssh:// URL)',
      misconfigured: true,
    });
  });

  it('names what is unset, not as a misconfiguration', () => {
    expect(publicationDisabled(settings(undefined, undefined, false))).toEqual({
      reason: 'GRAVITY_REPO_URL and SUBTENSOR_URL not set',
      misconfigured: false,
    });
    expect(publicationDisabled(settings('https://github.com/o/r', undefined, false))?.reason).toBe(
      'SUBTENSOR_URL not set',
    );
  });
});
