import {
  AggregateInput,
  legacyLabels,
  roundedJobs,
  stakeShares,
  toLegacyFormat,
  unroundedAggregate,
} from './desirability-aggregate';
import { JobParamsView, JobView } from './desirability.types';
import { expectDeclaredJobOrder } from '../../../test/support/job-order';

function params(label: string | null, extra: Partial<JobParamsView> = {}): JobParamsView {
  const platform = label?.startsWith('r/') ? 'reddit' : 'x';
  return {
    platform,
    label,
    keyword: null,
    post_start_datetime: null,
    post_end_datetime: null,
    ...extra,
  };
}

function job(
  id: string,
  weight: number,
  label: string | null,
  extra: Partial<JobParamsView> = {},
): JobView {
  return { id, weight, params: params(label, extra) };
}

const OWNER = [job('owner-btc', 0.75, '#bitcoin'), job('owner-reddit', 0.25, 'r/bitcoin')];

describe(stakeShares.name, () => {
  it('splits by stake among the voters', () => {
    const shares = stakeShares(
      ['a', 'b'],
      new Map([
        ['a', 300],
        ['b', 100],
        ['c', 600],
      ]),
    );
    expect(Object.fromEntries(shares)).toEqual({ a: 0.75, b: 0.25 });
  });

  it('gives a voter missing from the metagraph (or without stake) nothing', () => {
    const shares = stakeShares(
      ['a', 'gone', 'broke'],
      new Map([
        ['a', 5],
        ['broke', 0],
      ]),
    );
    expect(Object.fromEntries(shares)).toEqual({ a: 1, gone: 0, broke: 0 });
  });

  // Stakes are read from the chain; one below zero must not take from the others' shares.
  it('counts a negative stake as none', () => {
    const shares = stakeShares(
      ['a', 'negative', 'c'],
      new Map([
        ['a', 300],
        ['negative', -200],
        ['c', 100],
      ]),
    );
    expect(Object.fromEntries(shares)).toEqual({ a: 0.75, negative: 0, c: 0.25 });
  });

  it('splits equally when no voter has stake', () => {
    expect(Object.fromEntries(stakeShares(['a', 'b'], new Map()))).toEqual({ a: 0.5, b: 0.5 });
  });

  it('splits equally among the validators when the metagraph has no stakes', () => {
    const stakes = new Map([
      ['a', null],
      ['b', null],
    ]);
    expect(Object.fromEntries(stakeShares(['a', 'b', 'ghost'], stakes))).toEqual({
      a: 0.5,
      b: 0.5,
      ghost: 0,
    });
  });
});

/** The aggregate as get_desirabilities lists it. */
const listed = (input: AggregateInput) => roundedJobs(unroundedAggregate(input));

describe('the aggregate as listed (unroundedAggregate, then roundedJobs)', () => {
  const aggregate = (
    votes: { hotkey: string; jobs: JobView[] }[],
    stakes: [string, number][],
    active: string[],
  ) =>
    listed({
      owner: OWNER,
      votes,
      stakes: new Map(stakes),
      activeTaskIds: new Set(active),
    });

  it('weights the owner’s list 0.3 when nobody voted', () => {
    expect(aggregate([], [], [])).toEqual([
      job('owner-btc', 0.225, '#bitcoin'),
      job('owner-reddit', 0.075, 'r/bitcoin'),
    ]);
  });

  it('adds 0.7 × stake share × vote weight per validator, and sums identical jobs', () => {
    const votes = [
      { hotkey: 'big', jobs: [job('tao', 0.5, '#tao'), job('btc-by-big', 0.5, '#bitcoin')] },
      { hotkey: 'small', jobs: [job('ai', 1, '#ai')] },
    ];
    const result = aggregate(
      votes,
      [
        ['big', 300],
        ['small', 100],
      ],
      ['tao', 'btc-by-big', 'ai'],
    );
    const weights = Object.fromEntries(result.map((entry) => [entry.id, entry.weight]));
    expect(weights['owner-btc']).toBeCloseTo(0.3 * 0.75 + 0.7 * 0.75 * 0.5, 12);
    expect(weights.tao).toBeCloseTo(0.7 * 0.75 * 0.5, 12);
    expect(weights.ai).toBeCloseTo(0.7 * 0.25 * 1, 12);
    expect(weights['owner-reddit']).toBeCloseTo(0.3 * 0.25, 12);
    expect(result.map((entry) => entry.id)).toEqual(['owner-btc', 'tao', 'ai', 'owner-reddit']);
    expect(result.reduce((sum, entry) => sum + entry.weight, 0)).toBeCloseTo(1, 12);
  });

  it('counts only active tasks of the votes, without handing their weight to other jobs', () => {
    const votes = [{ hotkey: 'v', jobs: [job('tao', 0.5, '#tao'), job('ai', 0.5, '#ai')] }];
    const result = aggregate(votes, [['v', 1]], ['ai']);
    expect(result.map((entry) => [entry.id, entry.weight])).toEqual([
      ['ai', 0.35],
      ['owner-btc', 0.225],
      ['owner-reddit', 0.075],
    ]);
  });

  it('lists merged jobs under the owner’s id, else under the id that contributed most', () => {
    const votes = [
      { hotkey: 'a', jobs: [job('a-tao', 1, '#tao')] },
      { hotkey: 'b', jobs: [job('b-tao', 0.5, '#tao'), job('b-ai', 0.5, '#ai')] },
    ];
    const result = aggregate(
      votes,
      [
        ['a', 1],
        ['b', 3],
      ],
      ['a-tao', 'b-tao', 'b-ai'],
    );
    expect(result.map((entry) => entry.id).sort()).toEqual([
      'b-ai',
      'b-tao',
      'owner-btc',
      'owner-reddit',
    ]);
    expect(result.find((entry) => entry.id === 'b-tao')!.weight).toBeCloseTo(
      0.7 * (0.25 + 0.75 * 0.5),
      12,
    );
  });

  // Not reachable through the owner's file, whose parser refuses a job repeating another's
  // params; the aggregate still keeps the first id, as the owner declared it.
  it("lists owner jobs with the same params under the first one's id", () => {
    const owner = [
      job('owner-btc', 0.5, '#bitcoin'),
      job('owner-btc-again', 0.25, '#bitcoin'),
      job('owner-reddit', 0.25, 'r/bitcoin'),
    ];
    expect(listed({ owner, votes: [], stakes: new Map() })).toEqual([
      job('owner-btc', 0.225, '#bitcoin'),
      job('owner-reddit', 0.075, 'r/bitcoin'),
    ]);
  });

  it('keeps jobs that differ in keyword or dates apart', () => {
    const votes = [
      {
        hotkey: 'v',
        jobs: [
          job('plain', 0.2, '#tao'),
          job('dated', 0.4, '#tao', { post_start_datetime: '2026-11-01T00:00:00.000Z' }),
          // Only the end or the keyword set: each is a job apart from the plain one.
          job('ended', 0.2, '#tao', { post_end_datetime: '2026-12-01T00:00:00.000Z' }),
          job('keyword', 0.2, '#tao', { keyword: 'halving' }),
        ],
      },
    ];
    const ids = ['plain', 'dated', 'ended', 'keyword'];
    expect(aggregate(votes, [['v', 1]], ids).map((entry) => [entry.id, entry.weight])).toEqual([
      ['dated', 0.28],
      ['owner-btc', 0.225],
      ['ended', 0.14],
      ['keyword', 0.14],
      ['plain', 0.14],
      ['owner-reddit', 0.075],
    ]);
  });

  // The subnet's reader keys jobs on all five params (desirability_retrieval.py at 000322e2,
  // create_job_key): two windows on one label are two jobs there too.
  it('keeps jobs differing only in their dates apart, and merges those with the same five params', () => {
    const march = { post_start_datetime: '2026-03-01T00:00:00.000Z' };
    const votes = [
      {
        hotkey: 'a',
        jobs: [job('a-btc', 0.5, '#bitcoin', march), job('a-tao', 0.5, '#tao', march)],
      },
      {
        hotkey: 'b',
        jobs: [
          job('b-tao', 0.5, '#tao', { post_end_datetime: '2026-04-01T00:00:00.000Z' }),
          job('b-tao-march', 0.5, '#tao', march),
        ],
      },
    ];
    const result = listed({
      owner: OWNER,
      votes,
      stakes: new Map([
        ['a', 1],
        ['b', 1],
      ]),
    });
    // 0.7 × ½ × (0.5 + 0.5) for #tao from March (ties: the smaller id); 0.7 × ½ × 0.5 for each
    // of the others, the owner's undated #bitcoin apart from a's dated one.
    expect(result).toEqual(
      [
        job('owner-btc', 0.225, '#bitcoin'),
        job('a-tao', 0.35, '#tao', march),
        job('a-btc', 0.175, '#bitcoin', march),
        job('b-tao', 0.175, '#tao', { post_end_datetime: '2026-04-01T00:00:00.000Z' }),
        job('owner-reddit', 0.075, 'r/bitcoin'),
      ].sort((x, y) => y.weight - x.weight || (x.id < y.id ? -1 : 1)),
    );
  });

  it('leaves out jobs only voters without a share asked for', () => {
    const votes = [
      { hotkey: 'staked', jobs: [job('tao', 1, '#tao')] },
      { hotkey: 'unknown', jobs: [job('ai', 1, '#ai')] },
    ];
    expect(aggregate(votes, [['staked', 10]], ['tao', 'ai']).map((entry) => entry.id)).toEqual([
      'tao',
      'owner-btc',
      'owner-reddit',
    ]);
  });

  // Votes are read from jsonb, which orders keys its own way (shorter first): the aggregate listed
  // the owner's jobs as declared and the votes' as jsonb had them, two orders in one answer.
  it('lists every job with its keys in the declared order, whatever order a vote held them in', () => {
    const { params: p } = job('tao', 1, '#tao');
    const stored = {
      id: 'tao',
      params: {
        label: p.label,
        keyword: p.keyword,
        platform: p.platform,
        post_end_datetime: p.post_end_datetime,
        post_start_datetime: p.post_start_datetime,
      },
      weight: 1,
    };
    const listed = aggregate([{ hotkey: 'a', jobs: [stored] }], [['a', 1]], ['tao']);
    expect(listed.map((entry) => entry.id)).toEqual(['tao', 'owner-btc', 'owner-reddit']);
    for (const entry of listed) {
      expectDeclaredJobOrder(entry);
    }
  });
});

// Network files check ids for shape only: two validators (or a file and the owner) may give one
// id to different jobs, and a client keying the list by id lost one (an audit's finding).
describe('ids in the aggregate', () => {
  const stakes = new Map([
    ['a', 100],
    ['b', 50],
  ]);
  const ids = (jobs: JobView[]) => jobs.map(({ id, params }) => [id, params.label]);

  it("are unique: the owner's jobs keep theirs, a heavier job keeps a shared one, the other takes its next or a suffix", () => {
    const aggregate = listed({
      owner: [job('j1', 1, '#owner')],
      votes: [
        { hotkey: 'a', jobs: [job('j1', 0.5, '#tao'), job('j2', 0.5, '#btc')] },
        { hotkey: 'b', jobs: [job('j2', 0.6, '#tao'), job('j1', 0.4, '#eth')] },
      ],
      stakes,
    });
    // Heaviest first: #tao (0.373) gave most under j1, which is the owner's job's.
    expect(ids(aggregate)).toEqual([
      ['j2', '#tao'],
      ['j1', '#owner'],
      ['j2~2', '#btc'],
      ['j1~2', '#eth'],
    ]);
  });

  // Jobs of equal weight are taken in the order of their five params (`paramsKey`), whichever
  // order the files list them in: the first keeps the id they share.
  it('go to jobs of equal weight in the order of their params, whatever order they came in', () => {
    const labels = ['#c', '#a', '#d', '#b'];
    const orders = [labels, [...labels].reverse(), [labels[2], labels[0], labels[3], labels[1]]];
    for (const order of orders) {
      const aggregate = listed({
        owner: [],
        votes: [{ hotkey: 'a', jobs: order.map((label) => job('same', 0.25, label)) }],
        stakes,
      });
      expect(ids(aggregate)).toEqual([
        ['same', '#a'],
        ['same~2', '#b'],
        ['same~3', '#c'],
        ['same~4', '#d'],
      ]);
    }
  });

  // The sort compared keys made anew at each comparison: 100,000 jobs of equal weight took 4 s
  // (an audit's finding).
  it('makes the params key of a job once, however many ties the sort meets', () => {
    const jobs = Array.from({ length: 2_000 }, (_, index) =>
      job(`j${index}`, 1 / 2_000, `#${index}`),
    );
    const stringify = jest.spyOn(JSON, 'stringify');
    try {
      listed({ owner: [], votes: [{ hotkey: 'a', jobs }], stakes });
      expect(stringify.mock.calls.length).toBeLessThanOrEqual(jobs.length);
    } finally {
      stringify.mockRestore();
    }
  });

  it('cut to 80 characters with the suffix', () => {
    const long = 'é'.repeat(80);
    const aggregate = listed({
      owner: [],
      votes: [{ hotkey: 'a', jobs: [job(long, 0.6, '#tao'), job(long, 0.4, '#btc')] }],
      stakes,
    });
    expect(aggregate.map(({ id }) => id)).toEqual([long, `${'é'.repeat(78)}~2`]);
  });
});

describe('the legacy format', () => {
  it('groups labels by platform, adds up jobs sharing a label, and leaves out jobs without one', () => {
    const jobs = [
      job('a', 0.4, 'r/bitcoin'),
      job('b', 0.3, '#tao'),
      job('c', 0.15, null, { keyword: 'halving' }),
      job('d', 0.1, '#ai'),
      job('e', 0.05, '#ai', { keyword: 'agents' }),
    ];
    const [reddit, x, ...rest] = toLegacyFormat(legacyLabels(jobs));
    expect(rest).toEqual([]);
    expect(reddit).toEqual({ source_name: 'reddit', label_weights: { 'r/bitcoin': 0.4 } });
    expect(x).toEqual({ source_name: 'x', label_weights: { '#tao': 0.3, '#ai': 0.15 } });
  });

  it('merges a label over the whole list before any page is cut, to 12 significant digits', () => {
    // The heaviest job and the lightest share a label: a page of jobs held only part of it.
    const jobs = [
      job('a', 0.3, 'r/bitcoin'),
      job('b', 0.25, '#tao'),
      job('c', 0.2, '#ai'),
      job('d', 0.15, '#btc'),
      job('e', 0.0396666666667, 'r/bitcoin', { keyword: 'halving' }),
      job('f', 0.0003, 'r/bitcoin', { keyword: 'etf' }),
    ];
    const labels = legacyLabels(jobs);
    expect(labels.map(({ label, weight }) => [label, weight])).toEqual([
      ['r/bitcoin', 0.339966666667],
      ['#tao', 0.25],
      ['#ai', 0.2],
      ['#btc', 0.15],
    ]);
    const pages = [labels.slice(0, 2), labels.slice(2, 4)].map((page) => toLegacyFormat(page));
    expect(pages).toEqual([
      [
        { source_name: 'reddit', label_weights: { 'r/bitcoin': 0.339966666667 } },
        { source_name: 'x', label_weights: { '#tao': 0.25 } },
      ],
      [{ source_name: 'x', label_weights: { '#ai': 0.2, '#btc': 0.15 } }],
    ]);
  });

  // A reviewer's case: 0.048 + 0.7 × 2/3 is 0.514666666667; its jobs rounded to 12 digits first
  // (0.048 + 2 × 0.233333333333) added up to 0.514666666666.
  it('adds up the unrounded weights of the jobs sharing a label, and rounds once', () => {
    const dates = { post_start_datetime: '2026-11-01', post_end_datetime: '2026-11-02' };
    const exact = unroundedAggregate({
      owner: [job('owner-btc', 0.16, '#bitcoin'), job('owner-tao', 0.84, '#tao')],
      votes: [
        {
          hotkey: 'v',
          jobs: [
            job('k2', 1 / 3, '#bitcoin', { keyword: 'etf' }),
            job('k3', 1 / 3, '#bitcoin', dates),
            job('k1', 1 / 3, null, { keyword: 'solana' }),
          ],
        },
      ],
      stakes: new Map([['v', 1]]),
    });
    const bitcoin = legacyLabels(exact).find(({ label }) => label === '#bitcoin');
    expect(bitcoin?.weight).toBe(0.514666666667);
    // The jobs format lists each job to 12 digits, from the same unrounded weights.
    expect(roundedJobs(exact).map(({ id, weight }) => [id, weight])).toEqual([
      ['owner-tao', 0.252],
      ['k1', 0.233333333333],
      ['k2', 0.233333333333],
      ['k3', 0.233333333333],
      ['owner-btc', 0.048],
    ]);
  });

  // Labels of network files are kept as written: any text may be one.
  it('keeps a label named like an object member as the label it is', () => {
    const [x] = toLegacyFormat([
      { platform: 'x', label: '__proto__', weight: 0.5 },
      { platform: 'x', label: 'constructor', weight: 0.25 },
    ]);
    expect(Object.keys(x.label_weights)).toEqual(['__proto__', 'constructor']);
    expect(JSON.parse(JSON.stringify(x.label_weights))).toEqual(
      JSON.parse('{"__proto__": 0.5, "constructor": 0.25}'),
    );
  });

  it('orders labels of equal weight by platform, then label', () => {
    const jobs = [job('a', 0.5, '#b'), job('b', 0.5, 'r/a'), job('c', 0.5, '#a')];
    expect(legacyLabels(jobs).map(({ label }) => label)).toEqual(['r/a', '#a', '#b']);
  });
});
