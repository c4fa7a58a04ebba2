import { readNetworkVote, sameVote } from './network-vote';
import { UPLOADED_VOTE, uploadedParams } from '../../../test/support/uploaded-vote';

const SHA = '3f786850e387550fdab836ed7e6dc881de23001b';
const PATH = 'validator_preferences/5F.json';
const file = (value: unknown) => ({ kind: 'file' as const, text: JSON.stringify(value) });
const params = uploadedParams;
const job = (id: string, weight: number, label = '#tao') => ({
  id,
  weight,
  params: { ...params('x', label), platform: 'x' as const },
});

describe(readNetworkVote.name, () => {
  it('reads a file as the subnet’s reader does: skips the jobs it does not count, keeps weights and labels as written', () => {
    const vote = readNetworkVote({ kind: 'file', text: UPLOADED_VOTE }, PATH, SHA);
    expect(vote).toEqual({
      ok: true,
      submitted: JSON.parse(UPLOADED_VOTE),
      jobs: [
        {
          id: 'cafe',
          weight: 0.1,
          params: {
            platform: 'x',
            label: '#café',
            keyword: null,
            post_start_datetime: '2025-03-01T00:00:00.000Z',
            post_end_datetime: '2025-04-01T00:00:00.000Z',
          },
        },
        {
          id: 'btc',
          weight: 0.05,
          params: {
            platform: 'x',
            label: 'bitcoin',
            keyword: 'etf',
            post_start_datetime: null,
            post_end_datetime: null,
          },
        },
      ],
      notes: [
        'entry 1 (id "yt"): platform "youtube" is not one this gateway serves (x, reddit)',
        'entry 3 (id "upper"): platform "X": the subnet\'s lookup counts "x" and "reddit" only, in lower case',
      ],
    });
  });

  it('reads either format, scaling weights down to sum to 1 only when they sum to more', () => {
    const submitted = [
      { id: 'a', weight: 3, params: params('x', '#tao') },
      { id: 'b', weight: 1, params: params('reddit', 'r/bitcoin') },
    ];
    const vote = readNetworkVote(file(submitted), PATH, SHA);
    expect(vote.ok && vote.submitted).toEqual(submitted);
    expect(vote.ok && vote.jobs.map((each) => each.weight)).toEqual([0.75, 0.25]);
    const legacy = readNetworkVote(
      file([{ source_name: 'reddit', label_weights: { 'r/Bitcoin': 0.2, 'r/tao': 0.3 } }]),
      PATH,
      SHA,
    );
    expect(legacy.ok && legacy.jobs.map(({ weight, params }) => [params.label, weight])).toEqual([
      ['r/Bitcoin', 0.2],
      ['r/tao', 0.3],
    ]);
  });

  it('takes an empty list, and the first uploader’s {}, as a withdrawn vote', () => {
    const withdrawn = { ok: true, submitted: [], jobs: [], notes: [] };
    expect(readNetworkVote(file([]), PATH, SHA)).toEqual(withdrawn);
    expect(readNetworkVote(file({}), PATH, SHA)).toEqual(withdrawn);
  });

  it('keeps a file whose jobs it counts none of: a vote, whose validator the subnet counts', () => {
    const vote = readNetworkVote(
      file([{ id: 'yt', weight: 1, params: params('youtube', '@bittensor') }]),
      PATH,
      SHA,
    );
    expect(vote).toMatchObject({ ok: true, jobs: [], notes: [expect.stringContaining('youtube')] });
  });

  it('says why a file is no vote', () => {
    const reason = (input: Parameters<typeof readNetworkVote>[0]) => {
      const vote = readNetworkVote(input, PATH, SHA);
      return vote.ok ? undefined : vote.reason;
    };
    expect(reason({ kind: 'no-commit' })).toBe(`commit ${SHA} is not in the Gravity repository`);
    expect(reason({ kind: 'no-file' })).toBe(`commit ${SHA} has no ${PATH}`);
    expect(reason({ kind: 'not-utf8' })).toBe(
      `${PATH} at ${SHA} is not UTF-8 text (the subnet's reader fails on it)`,
    );
    expect(reason({ kind: 'file', text: '{' })).toMatch(/is not valid JSON/);
    // JSON.parse would quote the raw NUL into the reason, which Postgres cannot store.
    expect(reason({ kind: 'file', text: '\u0000[]' })).toBe(
      `${PATH} at ${SHA} is not valid JSON: it holds a NUL character`,
    );
    expect(reason({ kind: 'file', text: '[{"label": "#tao' })).toBe(
      `${PATH} at ${SHA} is not valid JSON (at position 16)`,
    );
    expect(reason(file({ jobs: [] }))).toBe(`${PATH} at ${SHA} is not a list of jobs`);
    expect(reason(file([{ source_name: 'x', label_weights: { '#tao': [0.5, null] } }]))).toBe(
      `${PATH} at ${SHA} is no vote: entry 0, label "#tao": the weight is not a number ` +
        "(the subnet's reader fails on it)",
    );
  });
  // V8's message quotes the file cut inside a surrogate pair; jsonb refused the aggregate.
  it('says why a file is not JSON in text Postgres can store', () => {
    const text = `[{"keyword": ${'🚀'.repeat(20)}}]`;
    const vote = readNetworkVote({ kind: 'file', text }, PATH, SHA);
    expect(vote).toEqual({ ok: false, reason: `${PATH} at ${SHA} is not valid JSON` });
  });
});

describe(sameVote.name, () => {
  it('matches the same jobs and weights in any order, within rounding', () => {
    const local = [job('a', 0.6), job('b', 0.4, '#btc')];
    expect(sameVote(local, [job('b', 0.4 + 1e-12, '#btc'), job('a', 0.6)])).toBe(true);
    expect(sameVote(local, [job('a', 0.5), job('b', 0.5, '#btc')])).toBe(false);
    expect(sameVote(local, [job('a', 0.6), job('b', 0.4, '#eth')])).toBe(false);
    expect(sameVote([], [])).toBe(true);
    expect(sameVote(local, [])).toBe(false);
    // The network's vote holds a job more: not the same vote, though every local job matches.
    expect(sameVote(local, [...local, job('c', 0.1, '#eth')])).toBe(false);
  });

  it('compares the published part of a vote by its weights as written, as the network reads them', () => {
    const published = [job('a', 0.3), job('b', 0.1, '#btc')];
    expect(sameVote(published, [job('a', 0.3), job('b', 0.1, '#btc')])).toBe(true);
    expect(sameVote(published, [job('a', 0.75), job('b', 0.25, '#btc')])).toBe(false);
  });
});
