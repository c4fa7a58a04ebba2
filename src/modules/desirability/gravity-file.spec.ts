import { legacyJobId } from './legacy-job-id';
import { readGravityFile } from './gravity-file';

const params = (overrides: Record<string, unknown> = {}) => ({
  keyword: null,
  platform: 'x',
  label: '#tao',
  post_start_datetime: null,
  post_end_datetime: null,
  ...overrides,
});
const read = (entries: unknown[]) => readGravityFile(entries, 100);
const notes = (entries: unknown[]) => {
  const reading = read(entries);
  return reading.ok ? reading.notes : reading.reason;
};
const refusal = (entries: unknown[]) => {
  const reading = read(entries);
  return reading.ok ? undefined : reading.reason;
};

describe(readGravityFile.name, () => {
  it('leaves out, one by one, the jobs the subnet’s reader skips or its lookup ignores', () => {
    const entries = [
      { id: 'kept', weight: 0.5, params: params() },
      { id: 'no-keyword', weight: 0.1, params: { platform: 'x', label: '#a' } },
      { id: 'long', weight: 0.1, params: params({ label: `#${'a'.repeat(140)}` }) },
      { id: 'zero', weight: 0, params: params() },
      { id: 'a/b', weight: 0.1, params: params() },
      { id: 'nul', weight: 0.1, params: params({ label: '#a\u0000' }) },
      { source_name: 'x', label_weights: { '#tao': 1 } },
      { id: 'no-params', weight: 0.1 },
    ];
    const reading = read(entries);
    expect(reading.ok && reading.jobs.map((job) => job.id)).toEqual(['kept']);
    expect(notes(entries)).toEqual([
      'entry 1 (id "no-keyword"): the subnet\'s reader skips a job whose params lack keyword',
      'entry 2 (id "long"): the subnet\'s reader skips a label over 140 characters',
      'entry 3 (id "zero"): a weight that is not above 0 adds nothing here (the subnet would subtract a negative one)',
      'entry 4 (id "a/b"): no id this gateway can list it under (1..80 printable characters, no slashes)',
      'entry 5 (id "nul"): text holding U+0000 or an unpaired surrogate, which cannot be stored',
      "entry 6: the subnet's reader skips a legacy entry in a file whose first entry is a job",
      'entry 7 (id "no-params"): the subnet\'s reader skips a job without params',
    ]);
  });

  it('reads a file as legacy only when its first entry has both legacy fields', () => {
    // With one of them, the first entry is a job without params (skipped), not a legacy entry,
    // so the jobs after it count; read as legacy, the job would refuse the whole file.
    const entries = [{ source_name: 'x' }, { id: 'kept', weight: 0.5, params: params() }];
    const reading = read(entries);
    expect(reading.ok && reading.jobs.map((job) => job.id)).toEqual(['kept']);
    expect(notes(entries)).toEqual([
      "entry 0: the subnet's reader skips a legacy entry in a file whose first entry is a job",
    ]);
  });

  it('counts a keyword of 1 to 140 characters, and leaves out an empty label and a keyword it cannot store', () => {
    const entries = [
      { id: 'k140', weight: 0.1, params: params({ keyword: 'k'.repeat(140) }) },
      { id: 'k141', weight: 0.1, params: params({ keyword: 'k'.repeat(141) }) },
      { id: 'empty', weight: 0.1, params: params({ label: '' }) },
      { id: 'nul', weight: 0.1, params: params({ keyword: 'k\u0000' }) },
      // Only one of the legacy fields, without params: a job without params, which it skips.
      { label_weights: { '#tao': 1 } },
    ];
    const reading = read(entries);
    expect(reading.ok && reading.jobs.map((job) => job.id)).toEqual(['k140']);
    expect(notes(entries)).toEqual([
      'entry 1 (id "k141"): a keyword of 1..140 characters only (the subnet\'s uploader\'s rule)',
      'entry 2 (id "empty"): an empty label names no data',
      'entry 3 (id "nul"): text holding U+0000 or an unpaired surrogate, which cannot be stored',
      "entry 4: the subnet's reader skips a legacy entry in a file whose first entry is a job",
    ]);
  });

  it('takes a missing weight as 1 and the dates the subnet’s parse_iso_date reads; a date it cannot read is dropped', () => {
    const reading = read([
      {
        id: 'a',
        params: params({
          post_start_datetime: '2025-03-01 06',
          post_end_datetime: 'next week',
        }),
      },
    ]);
    expect(reading).toEqual({
      ok: true,
      jobs: [
        {
          id: 'a',
          weight: 1,
          params: {
            platform: 'x',
            label: '#tao',
            keyword: null,
            post_start_datetime: '2025-03-01T06:00:00.000Z',
            post_end_datetime: null,
          },
        },
      ],
      notes: [
        'entry 0 (id "a"): post_end_datetime "next week" is no date the subnet\'s reader reads ' +
          '(parse_iso_date): counted without it, as the reader drops it',
      ],
    });
  });

  // The reader skips a job without params or keys, or with a long label, before it reads the
  // weight: such a job's weight, whatever it is, does not make the file fail.
  it('skips the jobs the subnet’s reader skips before reading their weight', () => {
    const entries = [
      { id: 'a', weight: 1, params: params() },
      { id: 'b', weight: 'x' },
      { id: 'c', weight: 'x', params: { platform: 'x', label: '#c' } },
      { id: 'd', weight: [1, '2025-01-01'], params: params({ label: `#${'é'.repeat(140)}` }) },
    ];
    expect(notes(entries)).toEqual([
      'entry 1 (id "b"): the subnet\'s reader skips a job without params',
      'entry 2 (id "c"): the subnet\'s reader skips a job whose params lack keyword',
      'entry 3 (id "d"): the subnet\'s reader skips a label over 140 characters',
    ]);
    expect(
      notes([{ source_name: 'x', label_weights: { '#a': 1, [`#${'a'.repeat(140)}`]: 'x' } }]),
    ).toEqual([
      `entry 0, label "#${'a'.repeat(140)}": the subnet's reader skips a label over 140 characters`,
    ]);
    // A label of 140 characters, one of them outside the BMP (two UTF-16 units), is counted.
    const emoji = read([
      { id: 'e', weight: 1, params: params({ label: `#${'a'.repeat(138)}😀` }) },
    ]);
    expect(emoji.ok && emoji.jobs.map((job) => job.id)).toEqual(['e']);
  });

  it('reads a date ending in Z as the subnet’s parse_iso_date does (as +00:00)', () => {
    const reading = read([
      {
        id: 'a',
        weight: 1,
        params: params({
          post_start_datetime: '2025-03-01T00:00:00Z',
          post_end_datetime: '2025-04-01T00:00:00+00:00',
        }),
      },
    ]);
    expect(reading.ok && reading.notes).toEqual([]);
    expect(reading.ok && reading.jobs[0].params).toMatchObject({
      post_start_datetime: '2025-03-01T00:00:00.000Z',
      post_end_datetime: '2025-04-01T00:00:00.000Z',
    });
  });

  // What CPython 3.10.13 answers for parse_iso_date(value) (a final Z as +00:00, then
  // datetime.fromisoformat): the subnet declares Python 3.10 (setup.py, ruff's py310), whose
  // fromisoformat every later version also reads; 3.11 reads more (.5, +0530), 3.10 drops those.
  it('reads a date exactly when the subnet’s parse_iso_date reads it under Python 3.10', () => {
    const start = (value: string) => {
      const reading = read([
        { id: 'a', weight: 1, params: params({ post_start_datetime: value }) },
      ]);
      return reading.ok ? reading.jobs[0].params.post_start_datetime : 'refused';
    };
    expect(
      [
        '2025-03-01T06Z',
        '2025-03-01T06+05:30',
        '2025-03-01_06:30:15',
        '2025-03-01T06:30:15-05:30:15',
        '2025-03-01T06:30:15.250+01:00',
        '2025-03-01T06:30:15 +01:00',
        '2025-03-01T06:30:15+05:75',
        '2025-03-01',
      ].map(start),
    ).toEqual([
      '2025-03-01T06:00:00.000Z',
      '2025-03-01T00:30:00.000Z',
      '2025-03-01T06:30:15.000Z',
      '2025-03-01T12:00:30.000Z',
      '2025-03-01T05:30:15.250Z',
      '2025-03-01T05:30:15.000Z',
      '2025-03-01T00:15:15.000Z',
      '2025-03-01T00:00:00.000Z',
    ]);
    // No Python reads the first three; 3.10 reads none of the others.
    expect(
      [
        '2025-03-01T06:30:15z',
        ' 2025-03-01',
        '2025-03-01T06:30:15+24:00',
        '2025-03-01T06:30:15.5Z',
        '2025-03-01T06:30:15+0530',
        '2025-03-01T06:30:15,500',
        '2025-03-01T06\u00e9+05:30',
      ].map(start),
    ).toEqual([null, null, null, null, null, null, null]);
  });

  it('keeps the jobs of a platform counted in any case in a legacy file, ids generated from the label as written', () => {
    const reading = read([
      { source_name: 'x', label_weights: { '#TAO': 0.25, '#btc': 0.25 } },
      { source_name: 'Reddit', label_weights: { 'r/tao': 0.5 } },
    ]);
    expect(reading.ok && reading.jobs.map(({ id, params }) => [id, params.label])).toEqual([
      [legacyJobId('x', '#TAO'), '#TAO'],
      [legacyJobId('x', '#btc'), '#btc'],
    ]);
    expect(reading.ok && reading.notes).toEqual([
      'entry 1, label "r/tao": platform "Reddit": the subnet\'s lookup counts "x" and "reddit" only, in lower case',
    ]);
  });

  it('refuses what makes the subnet’s reader fail, and what its uploaders never write', () => {
    expect(refusal([{ id: 'a', weight: 1, params: params({ label: null, keyword: 'tao' }) }])).toBe(
      'entry 0 (id "a"): the label is null (the subnet\'s lookup fails on a job without a label)',
    );
    expect(refusal([{ id: 'a', weight: '1', params: params() }])).toBe(
      'entry 0 (id "a"): the weight is not a number (the subnet\'s reader fails on it)',
    );
    // Python adds True as 1: the reader would count it, but no uploader writes one.
    expect(refusal([{ id: 'a', weight: true, params: params() }])).toBe(
      'entry 0 (id "a"): the weight is true, which the subnet\'s uploaders never write',
    );
    expect(refusal([{ id: 'a', weight: 1e400, params: params() }])).toBe(
      'entry 0 (id "a"): the weight is not a finite number',
    );
    expect(
      refusal([
        { source_name: 'x', label_weights: { '#tao': 1 } },
        { id: 'a', weight: 1, params: params() },
      ]),
    ).toMatch(/^entry 1: the subnet's reader fails on an entry without source_name/);
    expect(refusal([{ id: 'a', weight: 1, params: params(), note: 'mine' }])).toBe(
      'entry 0: "note", which the subnet\'s uploader never writes',
    );
    expect(refusal(['#tao'])).toBe('entry 0 is not an object');
    expect(refusal([{ id: 'a', weight: 1, params: params({ lang: 'en' }) }])).toBe(
      'entry 0 (id "a"): params: "lang", which the subnet\'s uploader never writes',
    );
    expect(
      readGravityFile(
        Array.from({ length: 3 }, (_, index) => ({ id: `j${index}`, weight: 1, params: params() })),
        2,
      ),
    ).toEqual({ ok: false, reason: 'it has 3 jobs, more than 2' });
    const two = readGravityFile(
      Array.from({ length: 2 }, (_, index) => ({ id: `j${index}`, weight: 1, params: params() })),
      2,
    );
    expect(two.ok && two.jobs).toHaveLength(2);
  });

  // Another validator's file is anyone's JSON: a field of the wrong type is the whole file
  // refused, as the subnet's reader fails on it, never a job counted with a number for a label
  // or a platform (the network's aggregate would differ from the one miners are paid on).
  it.each([
    [
      'source_name',
      [{ source_name: 1, label_weights: { '#tao': 1 } }],
      'entry 0: source_name is not text',
    ],
    [
      'label_weights (a list)',
      [{ source_name: 'x', label_weights: ['#tao'] }],
      'entry 0: label_weights is not an object',
    ],
    [
      'label_weights (null)',
      [{ source_name: 'x', label_weights: null }],
      'entry 0: label_weights is not an object',
    ],
    ['id', [{ id: 7, weight: 1, params: params() }], 'entry 0: the id is not text'],
    [
      'params (a list)',
      [{ id: 'a', weight: 1, params: ['x', '#tao'] }],
      'entry 0 (id "a"): params is not an object',
    ],
    [
      'platform',
      [{ weight: 1, params: params({ platform: 1 }) }],
      'entry 0: the platform is not text',
    ],
    [
      'label',
      [{ id: 'a', params: params({ label: 5 }) }],
      /^entry 0 \(id "a"\): the label is not text/,
    ],
    [
      'keyword',
      [{ id: 'a', params: params({ keyword: 5 }) }],
      'entry 0 (id "a"): keyword is not text',
    ],
    [
      'post_end_datetime',
      [{ id: 'a', params: params({ post_end_datetime: 1767225600 }) }],
      'entry 0 (id "a"): post_end_datetime is not text',
    ],
  ])('refuses the whole file when its %s is of another type', (_field, entries, reason) => {
    expect(refusal(entries)).toEqual(
      typeof reason === 'string' ? reason : expect.stringMatching(reason),
    );
  });

  it('keeps a vote’s weights as written up to a sum of 1, and scales them down to 1 above', () => {
    const weights = (values: number[]) => {
      const reading = read(
        values.map((weight, index) => ({ id: `j${index}`, weight, params: params() })),
      );
      return reading.ok ? reading.jobs.map((job) => job.weight) : [];
    };
    expect(weights([0.1, 0.2])).toEqual([0.1, 0.2]);
    expect(weights([3, 1])).toEqual([0.75, 0.25]);
    expect(weights([1e308, 1e308])).toEqual([0.5, 0.5]);
  });
});
