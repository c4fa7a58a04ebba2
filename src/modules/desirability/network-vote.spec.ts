import { readNetworkVote, sameVote } from './network-vote';

const SHA = '3f786850e387550fdab836ed7e6dc881de23001b';
const PATH = 'validator_preferences/5F.json';
const file = (value: unknown) => ({ kind: 'file' as const, text: JSON.stringify(value) });
const job = (id: string, weight: number, label = '#tao') => ({
  id,
  weight,
  params: {
    platform: 'x' as const,
    label,
    keyword: null,
    post_start_datetime: null,
    post_end_datetime: null,
  },
});

describe(readNetworkVote.name, () => {
  it('reads either format, normalized, keeping the file as submitted', () => {
    const submitted = [
      { id: 'a', weight: 3, params: { platform: 'x', label: '#tao' } },
      { source_name: 'reddit', label_weights: { 'r/bitcoin': 1 } },
    ];
    const vote = readNetworkVote(file(submitted), PATH, SHA);
    expect(vote.ok && vote.submitted).toEqual(submitted);
    expect(vote.ok && vote.jobs.map((each) => each.weight)).toEqual([0.75, 0.25]);
  });

  it('takes an empty list, and the first uploader’s {}, as a withdrawn vote', () => {
    expect(readNetworkVote(file([]), PATH, SHA)).toEqual({ ok: true, submitted: [], jobs: [] });
    expect(readNetworkVote(file({}), PATH, SHA)).toEqual({ ok: true, submitted: [], jobs: [] });
  });

  it('says why a file is no vote', () => {
    const reason = (input: Parameters<typeof readNetworkVote>[0]) => {
      const vote = readNetworkVote(input, PATH, SHA);
      return vote.ok ? undefined : vote.reason;
    };
    expect(reason({ kind: 'no-commit' })).toBe(`commit ${SHA} is not in the Gravity repository`);
    expect(reason({ kind: 'no-file' })).toBe(`commit ${SHA} has no ${PATH}`);
    expect(reason({ kind: 'file', text: '{' })).toMatch(/is not valid JSON/);
    expect(reason(file([{ source_name: 'x', label_weights: { '#tao': [0.5, null] } }]))).toMatch(
      /breaks the submission rules: \[0,"label_weights","#tao"\]/,
    );
    const many = Array.from({ length: 5 }, (_, index) => ({ id: `j${index}`, weight: 0 }));
    expect(reason(file(many))).toMatch(/\(and \d+ more\)$/);
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
  });

  it('compares the published part of a vote by its weights normalized, as the network is read', () => {
    const published = [job('a', 0.3), job('b', 0.1, '#btc')];
    expect(sameVote(published, [job('a', 0.75), job('b', 0.25, '#btc')])).toBe(true);
    expect(sameVote(published, [job('a', 0.5), job('b', 0.5, '#btc')])).toBe(false);
  });
});
