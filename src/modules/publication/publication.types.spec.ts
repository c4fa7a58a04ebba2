import { publicationDisabled, publishableJobs, publishedFile } from './publication.types';

describe(publishedFile.name, () => {
  const job = (id: string, weight: number, start: string | null, end: string | null) => ({
    id,
    weight,
    params: {
      platform: 'x',
      label: '#caf\u00e9',
      keyword: 'halving',
      post_start_datetime: start,
      post_end_datetime: end,
    },
  });

  // What the subnet's uploader writes for the same vote (json.dumps of its pydantic models,
  // indent=4): fields in the models' order, floats as repr writes them, non-ASCII escaped, and
  // the dates in the form every Python's datetime.fromisoformat reads (3.10 refuses a Z).
  it('writes the jobs as the subnet’s uploader does, dates as datetime.isoformat() writes them', () => {
    const file = publishedFile([
      job('a', 1, '2026-01-01T00:00:00.000Z', '2026-02-01T12:30:00.250Z'),
      job('b', 1.5e-5, null, null),
    ]);
    expect(file).toBe(
      [
        '[',
        '    {',
        '        "id": "a",',
        '        "weight": 1.0,',
        '        "params": {',
        '            "keyword": "halving",',
        '            "platform": "x",',
        '            "label": "#caf\\u00e9",',
        '            "post_start_datetime": "2026-01-01T00:00:00+00:00",',
        '            "post_end_datetime": "2026-02-01T12:30:00.250000+00:00"',
        '        }',
        '    },',
        '    {',
        '        "id": "b",',
        '        "weight": 1.5e-05,',
        '        "params": {',
        '            "keyword": "halving",',
        '            "platform": "x",',
        '            "label": "#caf\\u00e9",',
        '            "post_start_datetime": null,',
        '            "post_end_datetime": null',
        '        }',
        '    }',
        ']',
      ].join('\n'),
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
