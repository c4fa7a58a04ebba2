import { legacyJobId } from './legacy-job-id';
import { parseDesirabilityList, parseDesirabilityRequest } from './desirability-parser';

const ROOT = ['body', 'desirabilities'];

function job(overrides: Record<string, unknown> = {}, params: Record<string, unknown> = {}) {
  return {
    id: 'tao-x',
    weight: 1,
    params: { platform: 'x', label: '#tao', ...params },
    ...overrides,
  };
}

/** The violations of a body, as `loc` and `type` (messages are checked separately). */
function violations(body: unknown) {
  const result = parseDesirabilityRequest(body);
  if (result.ok) throw new Error('expected violations, got a valid submission');
  return result.errors.map(({ loc, type }) => ({ loc, type }));
}

function violationsOf(...items: unknown[]) {
  return violations({ desirabilities: items });
}

function parsed(...items: unknown[]) {
  const result = parseDesirabilityRequest({ desirabilities: items });
  if (!result.ok) throw new Error(`unexpected violations: ${JSON.stringify(result.errors)}`);
  return result.value;
}

describe(parseDesirabilityRequest.name, () => {
  describe('the body', () => {
    it.each([
      ['no body', undefined, [{ loc: ['body'], type: 'missing' }]],
      ['a list', [], [{ loc: ['body'], type: 'model_attributes_type' }]],
      ['no desirabilities', {}, [{ loc: ROOT, type: 'missing' }]],
      [
        'desirabilities not a list',
        { desirabilities: { a: 1 } },
        [{ loc: ROOT, type: 'list_type' }],
      ],
      [
        'an unknown field',
        { desirabilities: [], extra: 1 },
        [{ loc: ['body', 'extra'], type: 'extra_forbidden' }],
      ],
      [
        'an item that is no object',
        { desirabilities: ['x'] },
        [{ loc: [...ROOT, 0], type: 'dict_type' }],
      ],
    ])('rejects %s', (_case, body, expected) => {
      expect(violations(body)).toEqual(expected);
    });

    it('accepts an empty list (a withdrawn vote)', () => {
      expect(parsed()).toEqual({ submitted: [], jobs: [], locs: [] });
    });
  });

  describe('jobs', () => {
    it('normalizes a job and points later errors at its id', () => {
      const submission = parsed(
        job(
          { weight: 3 },
          {
            platform: ' X ',
            label: '  #TAO ',
            keyword: ' Subnet 13 ',
            post_start_datetime: '2026-11-01',
          },
        ),
      );
      expect(submission.jobs).toEqual([
        {
          id: 'tao-x',
          weight: 1,
          platform: 'x',
          label: '#tao',
          keyword: 'Subnet 13',
          postStart: new Date('2026-11-01T00:00:00Z'),
          postEnd: null,
        },
      ]);
      expect(submission.locs).toEqual([[...ROOT, 0, 'id']]);
    });

    it('reads an X label signed with the full-width ＃ as #, as on-demand reads it', () => {
      const submission = parsed(job({}, { platform: 'x', label: '＃Bitcoin' }));
      expect(submission.jobs[0].label).toBe('#bitcoin');
    });

    it.each([
      ['id missing', { id: undefined }, [...ROOT, 0, 'id'], 'missing'],
      ['id not a string', { id: 7 }, [...ROOT, 0, 'id'], 'string_type'],
      ['id empty', { id: '' }, [...ROOT, 0, 'id'], 'string_too_short'],
      ['id over 80 characters', { id: 'a'.repeat(81) }, [...ROOT, 0, 'id'], 'string_too_long'],
      ['id with a slash', { id: 'a/b' }, [...ROOT, 0, 'id'], 'value_error'],
      ['id with a backslash', { id: 'a\\b' }, [...ROOT, 0, 'id'], 'value_error'],
      ['weight missing', { weight: undefined }, [...ROOT, 0, 'weight'], 'missing'],
      ['weight null', { weight: null }, [...ROOT, 0, 'weight'], 'float_type'],
      ['weight a boolean', { weight: true }, [...ROOT, 0, 'weight'], 'float_type'],
      ['weight an object', { weight: {} }, [...ROOT, 0, 'weight'], 'float_type'],
      ['weight a list', { weight: [1] }, [...ROOT, 0, 'weight'], 'float_type'],
      ['weight a string of no number', { weight: 'high' }, [...ROOT, 0, 'weight'], 'float_parsing'],
      ['weight an empty string', { weight: '' }, [...ROOT, 0, 'weight'], 'float_parsing'],
      ['weight a number among spaces', { weight: ' 0.5' }, [...ROOT, 0, 'weight'], 'float_parsing'],
      ['weight with a plus sign', { weight: '+5' }, [...ROOT, 0, 'weight'], 'float_parsing'],
      ['weight without a leading digit', { weight: '.5' }, [...ROOT, 0, 'weight'], 'float_parsing'],
      ['weight in hexadecimal', { weight: '0x10' }, [...ROOT, 0, 'weight'], 'float_parsing'],
      ['weight the string inf', { weight: 'inf' }, [...ROOT, 0, 'weight'], 'float_parsing'],
      ['weight a string of zero', { weight: '0' }, [...ROOT, 0, 'weight'], 'greater_than'],
      [
        'weight a string past any double',
        { weight: '1e400' },
        [...ROOT, 0, 'weight'],
        'finite_number',
      ],
      ['weight zero', { weight: 0 }, [...ROOT, 0, 'weight'], 'greater_than'],
      ['weight negative', { weight: -1 }, [...ROOT, 0, 'weight'], 'greater_than'],
      ['weight infinite', { weight: Infinity }, [...ROOT, 0, 'weight'], 'finite_number'],
      ['params missing', { params: undefined }, [...ROOT, 0, 'params'], 'missing'],
      ['params not an object', { params: ['x'] }, [...ROOT, 0, 'params'], 'dict_type'],
      ['an unknown field', { extra: 1 }, [...ROOT, 0, 'extra'], 'extra_forbidden'],
    ])('rejects %s', (_case, overrides, loc, type) => {
      const item: Record<string, unknown> = job(overrides);
      for (const key of Object.keys(item)) if (item[key] === undefined) delete item[key];
      expect(violationsOf(item)).toEqual([{ loc, type }]);
    });

    // A fuzz audit's finding: `\u202eabc` was registered, and `tao-x\u200b` would be, listed and
    // logged exactly as `tao-x`.
    it('rejects an id holding a format character (bidi control, zero-width, BOM), at the id', () => {
      for (const id of ['\u202eabc', 'tao-x\u200b', '\ufefftao', 'a\u2066b\u2069', 'a\u200db']) {
        const result = parseDesirabilityRequest({ desirabilities: [job({ id })] });
        expect(result.ok ? [] : result.errors).toEqual([
          {
            loc: [...ROOT, 0, 'id'],
            msg: 'Value error, id must be printable: no format characters (bidi controls, zero-width characters, …)',
            type: 'value_error',
          },
        ]);
      }
    });

    // A Unicode audit registered `#\u001b]0;pwned\u0007x` (listed raw) and `#bitcoin\u0085` beside
    // `#bitcoin` (a second task: JS's trim keeps NEL).
    it('rejects a label or keyword holding a control character, at the field', () => {
      const label = (text: string) => job({}, { label: text });
      const keyword = (text: string) => job({}, { keyword: text });
      const cases: [Record<string, unknown>, string, string][] = [
        [label('#\u001b]0;pwned\u0007x'), 'label', 'label'],
        [label('#bitcoin\u0085'), 'label', 'label'],
        [label('r/a\tb'), 'label', 'label'],
        [keyword('\u001b[2J\u001b[31mALERT'), 'keyword', 'keyword'],
        [keyword('two\nlines'), 'keyword', 'keyword'],
      ];
      for (const [item, field, name] of cases) {
        const result = parseDesirabilityRequest({ desirabilities: [item] });
        expect(result.ok ? [] : result.errors).toEqual([
          {
            loc: [...ROOT, 0, 'params', field],
            msg: `Value error, ${name} must be printable: no control characters (CR, LF, TAB, ESC, NEL, …)`,
            type: 'value_error',
          },
        ]);
      }
      // Legacy entries: the label is the key.
      const legacy = parseDesirabilityRequest({
        desirabilities: [{ source_name: 'x', label_weights: { '#a\u0007': 0.5 } }],
      });
      expect(legacy.ok ? [] : legacy.errors.map((error) => error.loc)).toEqual([
        [...ROOT, 0, 'label_weights', '#a\u0007', '[key]'],
      ]);
    });

    it('accepts an id of exactly 80 characters', () => {
      expect(parsed(job({ id: 'a'.repeat(80) })).jobs[0].id).toHaveLength(80);
    });

    const params = [...ROOT, 0, 'params'];
    it.each([
      ['platform missing', { platform: undefined }, [...params, 'platform'], 'missing'],
      ['platform not a string', { platform: 1 }, [...params, 'platform'], 'string_type'],
      ['an unknown platform', { platform: 'facebook' }, [...params, 'platform'], 'enum'],
      ['neither label nor keyword', { label: null, keyword: null }, params, 'value_error'],
      ['label not a string', { label: ['#tao'] }, [...params, 'label'], 'string_type'],
      ['label empty', { label: '' }, [...params, 'label'], 'string_too_short'],
      ['label only spaces', { label: '   ' }, [...params, 'label'], 'string_too_short'],
      [
        'label over 140 characters',
        { label: `#${'a'.repeat(140)}` },
        [...params, 'label'],
        'string_too_long',
      ],
      ['an X label without #', { label: 'tao' }, [...params, 'label'], 'value_error'],
      ['an X label that is only #', { label: '#' }, [...params, 'label'], 'value_error'],
      ['an X label with a space', { label: '#two words' }, [...params, 'label'], 'value_error'],
      // '#a#b' is two hashtags on X, not one label.
      ['an X label with a second #', { label: '#a#b' }, [...params, 'label'], 'value_error'],
      [
        'a Reddit label without r/',
        { platform: 'reddit', label: 'bitcoin' },
        [...params, 'label'],
        'value_error',
      ],
      [
        'a Reddit label whose name has a slash',
        { platform: 'reddit', label: 'r/bitcoin/new' },
        [...params, 'label'],
        'value_error',
      ],
      [
        'a Reddit label without a name',
        { platform: 'reddit', label: 'r/' },
        [...params, 'label'],
        'value_error',
      ],
      [
        'a Reddit label too long once normalized',
        { platform: 'reddit', label: `/${'a'.repeat(139)}` },
        [...params, 'label'],
        'string_too_long',
      ],
      ['keyword not a string', { keyword: 5 }, [...params, 'keyword'], 'string_type'],
      ['keyword empty', { label: null, keyword: ' ' }, [...params, 'keyword'], 'string_too_short'],
      [
        'keyword over 140 characters',
        { keyword: 'k'.repeat(141) },
        [...params, 'keyword'],
        'string_too_long',
      ],
      [
        'a start date that is no date',
        { post_start_datetime: 'yesterday' },
        [...params, 'post_start_datetime'],
        'value_error',
      ],
      [
        'an end date that is no date',
        { post_end_datetime: '2026-02-31' },
        [...params, 'post_end_datetime'],
        'value_error',
      ],
      [
        'an end date past year 9999 in UTC',
        { post_end_datetime: '9999-12-31T23:59:59-00:01' },
        [...params, 'post_end_datetime'],
        'value_error',
      ],
      [
        'a date that is no string',
        { post_end_datetime: 1700000000 },
        [...params, 'post_end_datetime'],
        'string_type',
      ],
      [
        'a start after the end',
        { post_start_datetime: '2026-11-02', post_end_datetime: '2026-11-01T23:00:00Z' },
        [...params, 'post_start_datetime'],
        'value_error',
      ],
      [
        'a start equal to the end',
        {
          post_start_datetime: '2026-11-01T02:00:00+02:00',
          post_end_datetime: '2026-11-01T00:00:00',
        },
        [...params, 'post_start_datetime'],
        'value_error',
      ],
      ['an unknown params field', { lang: 'en' }, [...params, 'lang'], 'extra_forbidden'],
    ])('rejects %s', (_case, overrides, loc, type) => {
      const item = job({}, overrides);
      for (const key of Object.keys(item.params)) {
        if ((item.params as Record<string, unknown>)[key] === undefined)
          delete (item.params as Record<string, unknown>)[key];
      }
      expect(violationsOf(item)).toEqual([{ loc, type }]);
    });

    it.each([
      ['/r/Bitcoin', 'r/bitcoin'],
      ['/Bitcoin', 'r/bitcoin'],
      ['R/Bitcoin', 'r/bitcoin'],
      [' r/bitcoin ', 'r/bitcoin'],
    ])('normalizes the Reddit label %p to %p', (label, expected) => {
      expect(parsed(job({}, { platform: 'Reddit', label })).jobs[0]).toMatchObject({
        platform: 'reddit',
        label: expected,
      });
    });

    it('accepts a keyword without a label, and reads zoneless dates as UTC', () => {
      const [only] = parsed(
        job(
          {},
          {
            label: null,
            keyword: 'halving',
            post_start_datetime: '2026-11-01T10:00:00',
            post_end_datetime: '2026-11-01T12:00:00+01:00',
          },
        ),
      ).jobs;
      expect(only).toMatchObject({
        label: null,
        keyword: 'halving',
        postStart: new Date('2026-11-01T10:00:00Z'),
        postEnd: new Date('2026-11-01T11:00:00Z'),
      });
    });

    it('rejects a repeated id at the repetition', () => {
      expect(
        violationsOf(job(), job({ id: 'other' }, { label: '#btc' }), job({}, { label: '#ai' })),
      ).toEqual([{ loc: [...ROOT, 2, 'id'], type: 'value_error' }]);
    });

    it('rejects the params of an earlier job under another id, once normalized, at the repetition', () => {
      const result = parseDesirabilityRequest({
        desirabilities: [
          job({ id: 'a' }, { label: '#btc' }),
          job({ id: 'b' }, { platform: 'X', label: ' #BTC ' }),
          job({ id: 'c' }, { label: '#btc', keyword: 'halving' }),
          job(
            { id: 'd' },
            { label: '#btc', keyword: 'halving', post_start_datetime: '2026-01-01' },
          ),
          job({ id: 'e' }, { label: '#btc', post_end_datetime: '2026-01-02' }),
          job(
            { id: 'f' },
            { label: '#BTC', keyword: 'halving', post_start_datetime: '2026-01-01T00:00:00Z' },
          ),
          // One word however its accent is composed (NFC, NFD): a Unicode audit's finding.
          job({ id: 'g' }, { label: '#caf\u00e9', keyword: 'cr\u00e8me' }),
          job({ id: 'h' }, { label: '#cafe\u0301', keyword: 'cre\u0300me' }),
          // A keyword in another case: matched case-insensitively, one job.
          job({ id: 'i' }, { label: '#btc', keyword: 'HALVING' }),
          // A keyword with a capital whose lower-case letter only is composed: matched as one
          // word (a property-based audit). Such labels stay two: miners file them apart.
          job({ id: 'j' }, { label: '#btc', keyword: '\u01f0' }),
          job({ id: 'k' }, { label: '#btc', keyword: 'J\u030c' }),
          job({ id: 'l' }, { label: '#\u01f0' }),
          job({ id: 'm' }, { label: '#J\u030c' }),
        ],
      });
      expect(result.ok ? [] : result.errors).toEqual([
        {
          loc: [...ROOT, 1, 'id'],
          msg: "Value error, the params of id 'b' are already used by another job of this submission (id 'a')",
          type: 'value_error',
        },
        {
          loc: [...ROOT, 5, 'id'],
          msg: "Value error, the params of id 'f' are already used by another job of this submission (id 'd')",
          type: 'value_error',
        },
        {
          loc: [...ROOT, 7, 'id'],
          msg: "Value error, the params of id 'h' are already used by another job of this submission (id 'g')",
          type: 'value_error',
        },
        {
          loc: [...ROOT, 8, 'id'],
          msg: "Value error, the params of id 'i' are already used by another job of this submission (id 'c')",
          type: 'value_error',
        },
        {
          loc: [...ROOT, 10, 'id'],
          msg: "Value error, the params of id 'k' are already used by another job of this submission (id 'j')",
          type: 'value_error',
        },
      ]);
    });

    it('reads a weight given as a string of a decimal number as that number, kept so', () => {
      const submission = parsed(
        job({ weight: '0.5' }),
        job({ id: 'b', weight: '1.5e0' }, { label: '#b' }),
        { source_name: 'x', label_weights: { '#c': '2' } },
      );
      expect(submission.jobs.map((entry) => entry.weight)).toEqual([0.125, 0.375, 0.5]);
      // Stored and answered back as numbers, as the document's schema has them.
      expect(submission.submitted).toEqual([
        job({ weight: 0.5 }),
        job({ id: 'b', weight: 1.5 }, { label: '#b' }),
        { source_name: 'x', label_weights: { '#c': 2 } },
      ]);
    });

    it('tells a weight of the wrong type from a string that is no number, as pydantic does', () => {
      const result = parseDesirabilityRequest({
        desirabilities: [
          { id: 'w', weight: null, params: { platform: 'x', label: '#a' } },
          { source_name: 'x', label_weights: { '#b': {}, '#c': 'high' } },
        ],
      });
      expect(result.ok ? [] : result.errors).toEqual([
        { loc: [...ROOT, 0, 'weight'], msg: 'Input should be a valid number', type: 'float_type' },
        {
          loc: [...ROOT, 1, 'label_weights', '#b'],
          msg: 'Input should be a valid number',
          type: 'float_type',
        },
        {
          loc: [...ROOT, 1, 'label_weights', '#c'],
          msg: 'Input should be a valid number, unable to parse string as a number',
          type: 'float_parsing',
        },
      ]);
    });

    it('explains each violation as pydantic would', () => {
      const result = parseDesirabilityRequest({
        desirabilities: [job({ weight: 0 }, { platform: 'mastodon', label: 'x'.repeat(141) })],
      });
      expect(result.ok ? [] : result.errors).toEqual([
        {
          loc: [...ROOT, 0, 'weight'],
          msg: 'Input should be greater than 0',
          type: 'greater_than',
          ctx: { gt: 0 },
        },
        {
          loc: [...ROOT, 0, 'params', 'platform'],
          msg: "Input should be 'x' or 'reddit'",
          type: 'enum',
          ctx: { expected: "'x' or 'reddit'" },
        },
        {
          loc: [...ROOT, 0, 'params', 'label'],
          msg: 'String should have at most 140 characters',
          type: 'string_too_long',
          ctx: { max_length: 140 },
        },
      ]);
    });
  });

  describe('legacy entries', () => {
    const legacy = (labelWeights: unknown, sourceName: unknown = 'reddit') => ({
      source_name: sourceName,
      label_weights: labelWeights,
    });

    it('turns each label into a job with a generated id, pointing later errors at the label', () => {
      const submission = parsed(legacy({ 'r/Bitcoin': 3, '/ethereum': 1 }, 'REDDIT'));
      expect(submission.jobs).toEqual([
        {
          id: legacyJobId('reddit', 'r/bitcoin'),
          weight: 0.75,
          platform: 'reddit',
          label: 'r/bitcoin',
          keyword: null,
          postStart: null,
          postEnd: null,
          legacy: true,
        },
        {
          id: legacyJobId('reddit', 'r/ethereum'),
          weight: 0.25,
          platform: 'reddit',
          label: 'r/ethereum',
          keyword: null,
          postStart: null,
          postEnd: null,
          legacy: true,
        },
      ]);
      expect(submission.locs).toEqual([
        [...ROOT, 0, 'label_weights', 'r/Bitcoin'],
        [...ROOT, 0, 'label_weights', '/ethereum'],
      ]);
    });

    it.each([
      [
        'source_name missing',
        { label_weights: { '#tao': 1 } },
        [...ROOT, 0, 'source_name'],
        'missing',
      ],
      [
        'source_name not a string',
        legacy({ '#tao': 1 }, null),
        [...ROOT, 0, 'source_name'],
        'string_type',
      ],
      [
        'an unknown source_name',
        legacy({ '#tao': 1 }, 'tiktok'),
        [...ROOT, 0, 'source_name'],
        'enum',
      ],
      ['label_weights missing', { source_name: 'x' }, [...ROOT, 0, 'label_weights'], 'missing'],
      [
        'label_weights not an object',
        legacy([['r/a', 1]]),
        [...ROOT, 0, 'label_weights'],
        'dict_type',
      ],
      ['label_weights empty', legacy({}), [...ROOT, 0, 'label_weights'], 'too_short'],
      [
        'a label breaking the rule',
        legacy({ bitcoin: 1 }),
        [...ROOT, 0, 'label_weights', 'bitcoin', '[key]'],
        'value_error',
      ],
      [
        'an empty label',
        legacy({ '': 1 }),
        [...ROOT, 0, 'label_weights', '', '[key]'],
        'string_too_short',
      ],
      [
        'a label over 140 characters',
        legacy({ [`r/${'a'.repeat(139)}`]: 1 }),
        [...ROOT, 0, 'label_weights', `r/${'a'.repeat(139)}`, '[key]'],
        'string_too_long',
      ],
      [
        'a weight of zero',
        legacy({ 'r/bitcoin': 0 }),
        [...ROOT, 0, 'label_weights', 'r/bitcoin'],
        'greater_than',
      ],
      [
        'a weight that is no number',
        legacy({ 'r/bitcoin': 'high' }),
        [...ROOT, 0, 'label_weights', 'r/bitcoin'],
        'float_parsing',
      ],
      [
        'a weight of null',
        legacy({ 'r/bitcoin': null }),
        [...ROOT, 0, 'label_weights', 'r/bitcoin'],
        'float_type',
      ],
      [
        'a weight of true',
        legacy({ 'r/bitcoin': true }),
        [...ROOT, 0, 'label_weights', 'r/bitcoin'],
        'float_type',
      ],
      [
        'an unknown field',
        { ...legacy({ 'r/bitcoin': 1 }), weight: 1 },
        [...ROOT, 0, 'weight'],
        'extra_forbidden',
      ],
    ])('rejects %s', (_case, item, loc, type) => {
      expect(violationsOf(item)).toEqual([{ loc, type }]);
    });

    it('rejects a label that repeats another after normalization, at the repetition', () => {
      expect(violationsOf(legacy({ 'r/Bitcoin': 1 }), legacy({ '/r/bitcoin': 1 }))).toEqual([
        { loc: [...ROOT, 1, 'label_weights', '/r/bitcoin'], type: 'value_error' },
      ]);
    });

    it('rejects a label that repeats another of the same entry, at the repetition', () => {
      expect(violationsOf(legacy({ 'r/Bitcoin': 1, '/bitcoin': 1 }))).toEqual([
        { loc: [...ROOT, 0, 'label_weights', '/bitcoin'], type: 'value_error' },
      ]);
    });

    // The label's first generation's id may be another task's once that one ended (its label
    // then runs under a later generation): naming it called the job "another job" of itself.
    it('names a label by its label, not by the id it may not get, when a job repeats its params under that id', () => {
      const id = legacyJobId('reddit', 'r/bitcoin');
      const result = parseDesirabilityRequest({
        desirabilities: [
          legacy({ 'r/Bitcoin': 1 }),
          job({ id }, { platform: 'reddit', label: 'r/bitcoin' }),
        ],
      });
      expect(result.ok ? [] : result.errors).toEqual([
        {
          loc: [...ROOT, 1, 'id'],
          msg: `Value error, the params of id '${id}' are already used by another job of this submission (the reddit label 'r/bitcoin' of a legacy entry)`,
          type: 'value_error',
        },
      ]);
    });

    it('rejects a label whose params are a job’s, at the label, and a job with a label’s params', () => {
      const result = parseDesirabilityRequest({
        desirabilities: [
          job({ id: 'mine' }, { label: '#btc' }),
          legacy({ '#BTC': 1 }, 'x'),
          legacy({ 'r/ai': 1 }),
          job({ id: 'also-ai' }, { platform: 'reddit', label: '/ai' }),
        ],
      });
      expect(result.ok ? [] : result.errors).toEqual([
        {
          loc: [...ROOT, 1, 'label_weights', '#BTC'],
          msg: "Value error, the params of this label are already used by another job of this submission (id 'mine')",
          type: 'value_error',
        },
        {
          loc: [...ROOT, 3, 'id'],
          msg: "Value error, the params of id 'also-ai' are already used by another job of this submission (the reddit label 'r/ai' of a legacy entry)",
          type: 'value_error',
        },
      ]);
    });

    // The label takes the id it resolves to when registered, skipping the ids given to the
    // submission's jobs (withCurrentLegacyIds); that id is checked then (legacyIdClashes).
    it('leaves a job whose id equals a label’s first generated id to the registration', () => {
      const id = legacyJobId('x', '#tao');
      for (const items of [
        [legacy({ '#tao': 1 }, 'x'), job({ id }, { label: '#ai' })],
        [job({ id }, { label: '#ai' }), legacy({ '#tao': 1 }, 'x')],
      ])
        expect(parsed(...items).jobs.map((parsedJob) => parsedJob.id)).toEqual(items.map(() => id));
      // Labels are still held against each other, and jobs against jobs.
      const ai = job({}, { label: '#ai' });
      expect(violationsOf(legacy({ '#tao': 1 }, 'x'), legacy({ '#TAO': 1 }, 'x'), ai, ai)).toEqual([
        { loc: [...ROOT, 1, 'label_weights', '#TAO'], type: 'value_error' },
        { loc: [...ROOT, 3, 'id'], type: 'value_error' },
      ]);
    });

    it('generates the same id for the same platform and label, and ids within the id rules', () => {
      expect(parsed(legacy({ 'R/Bitcoin': 1 })).jobs[0].id).toBe(
        parsed(legacy({ '/bitcoin': 5 })).jobs[0].id,
      );
      expect(legacyJobId('x', '#bitcoin')).not.toBe(legacyJobId('reddit', 'r/bitcoin'));
      expect(legacyJobId('reddit', 'r/bitcoin')).toMatch(/^reddit-r-bitcoin-[0-9a-f]{12}$/);
      for (const label of [
        `#${'ü'.repeat(139)}`,
        `r/${'a/b\\c'.repeat(27)}`,
        '#🚀',
        `#${'x'.repeat(139)}`,
      ]) {
        const id = legacyJobId(label.startsWith('#') ? 'x' : 'reddit', label);
        expect(id.length).toBeLessThanOrEqual(80);
        expect(id).not.toMatch(/[/\\]/);
      }
    });
  });

  describe('weights', () => {
    it('are normalized to sum to 1 over the whole submission, across both formats', () => {
      const submission = parsed(job({ weight: 2 }), {
        source_name: 'x',
        label_weights: { '#ai': 1, '#btc': 1 },
      });
      expect(submission.jobs.map((entry) => entry.weight)).toEqual([0.5, 0.25, 0.25]);
    });

    // Divided in binary floating point they were 0.7000000000000001 and 0.10000000000000002,
    // where the subnet's uploader writes 0.7 and 0.1 (weight-sum.spec.ts).
    it("are the subnet's uploader's shares, read in decimal", () => {
      const submission = parsed(
        job({ weight: 0.7 }),
        job({ id: 'b', weight: 0.1 }, { label: '#b' }),
        job({ id: 'c', weight: 0.1 }, { label: '#c' }),
        job({ id: 'd', weight: 0.1 }, { label: '#d' }),
      );
      expect(submission.jobs.map((entry) => entry.weight)).toEqual([0.7, 0.1, 0.1, 0.1]);
    });

    it('are normalized without overflow when huge', () => {
      const submission = parsed(
        job({ weight: 1e308 }),
        job({ id: 'b', weight: 1e308 }, { label: '#b' }),
      );
      expect(submission.jobs.map((entry) => entry.weight)).toEqual([0.5, 0.5]);
      // Halving them would not do: three near Number.MAX_VALUE still overflow at half.
      const three = parsed(
        job({ weight: 1.7e308 }),
        job({ id: 'b', weight: 1.7e308 }, { label: '#b' }),
        job({ id: 'c', weight: 1.7e308 }, { label: '#c' }),
      );
      expect(three.jobs.map((entry) => entry.weight)).toEqual([1 / 3, 1 / 3, 1 / 3]);
    });

    it('refuse each weight whose share of the sum underflows to 0, at the weight', () => {
      const msg =
        'Value error, weight is too small beside the other weights of this submission: divided ' +
        "by their sum it is 0, and a job's normalized weight must be greater than 0";
      const tiny = parseDesirabilityRequest({
        desirabilities: [
          job({ weight: 1e308 }),
          job({ id: 'b', weight: 1e-320 }, { label: '#b' }),
          // 1 / 1e308 is a subnormal number, not 0.
          { source_name: 'x', label_weights: { '#c': 1, '#d': 5e-324 } },
        ],
      });
      expect(tiny.ok ? [] : tiny.errors).toEqual([
        { loc: [...ROOT, 1, 'weight'], msg, type: 'value_error' },
        { loc: [...ROOT, 2, 'label_weights', '#d'], msg, type: 'value_error' },
      ]);
      // Underflowing once the sum is scaled down (it would overflow): [1, 1, 1e-320 / 1e308].
      expect(
        violationsOf(
          job({ weight: 1e308 }),
          job({ id: 'b', weight: 1e308 }, { label: '#b' }),
          job({ id: 'c', weight: 1e-10 }, { label: '#c' }),
          job({ id: 'd', weight: 1e-320 }, { label: '#d' }),
        ),
      ).toEqual([{ loc: [...ROOT, 3, 'weight'], type: 'value_error' }]);
      // A share below half the smallest double (5e-324) is 0, as Python's float() of it.
      expect(
        violationsOf(job({ weight: 1e10 }), job({ id: 'b', weight: 1e-314 }, { label: '#b' })),
      ).toEqual([{ loc: [...ROOT, 1, 'weight'], type: 'value_error' }]);
    });

    it('keep a tiny weight whose share is still above 0', () => {
      const submission = parsed(
        job({ weight: 1 }),
        job({ id: 'b', weight: 1e-300 }, { label: '#b' }),
      );
      expect(submission.jobs.map((entry) => entry.weight)).toEqual([1, 1e-300]);
      // Tiny weights alone are shares like any others.
      const alone = parsed(
        job({ weight: 5e-324 }),
        job({ id: 'b', weight: 5e-324 }, { label: '#b' }),
      );
      expect(alone.jobs.map((entry) => entry.weight)).toEqual([0.5, 0.5]);
    });
  });

  // The date reader the on-demand fix changed (0ea6271) is this one: years 0001..0099 are
  // themselves (Date.UTC read them as 19xx), and an instant before 0001 in UTC says so.
  it('reads a window at the first and the last years Python reads, and refuses one outside', () => {
    const [first] = parsed(
      job({}, { post_start_datetime: '0001-01-01', post_end_datetime: '0050-06-30T12:00:00Z' }),
    ).jobs;
    expect(first.postStart?.toISOString()).toBe('0001-01-01T00:00:00.000Z');
    expect(first.postEnd?.toISOString()).toBe('0050-06-30T12:00:00.000Z');
    const [last] = parsed(
      job({}, { post_start_datetime: '9999-12-31', post_end_datetime: '9999-12-31T23:59:59Z' }),
    ).jobs;
    expect(last.postEnd?.toISOString()).toBe('9999-12-31T23:59:59.000Z');
    const result = parseDesirabilityRequest({
      desirabilities: [job({}, { post_start_datetime: '0001-01-01T00:00:00+00:01' })],
    });
    expect(result.ok ? [] : result.errors).toEqual([
      {
        loc: [...ROOT, 0, 'params', 'post_start_datetime'],
        msg: 'Value error, must not be earlier than 0001-01-01T00:00:00Z once in UTC',
        type: 'value_error',
      },
    ]);
  });

  // ISO 8601 week, basic and ordinal dates, which the reader does not take: the refusal names the
  // forms it takes; it said "must be an ISO 8601 date or date-time", false of these.
  it('tells a window ISO 8601 writes in a form it does not read which forms it reads', () => {
    const result = parseDesirabilityRequest({
      desirabilities: [
        job({}, { post_start_datetime: '2026-W47', post_end_datetime: '20261120' }),
        job({ id: 'b' }, { label: '#b', post_start_datetime: '2026-324' }),
      ],
    });
    const msg =
      'Value error, must be a date (YYYY-MM-DD) or a date-time (YYYY-MM-DDTHH:MM[:SS[.fraction]], ' +
      'T or a space between date and time, up to 9 fraction digits), with an optional zone (Z, ±HH, ±HHMM or ±HH:MM; none is UTC), ' +
      'e.g. 2026-11-20 or 2026-11-20T12:00:00Z';
    expect(result.ok ? [] : result.errors).toEqual([
      { loc: [...ROOT, 0, 'params', 'post_start_datetime'], msg, type: 'value_error' },
      { loc: [...ROOT, 0, 'params', 'post_end_datetime'], msg, type: 'value_error' },
      { loc: [...ROOT, 1, 'params', 'post_start_datetime'], msg, type: 'value_error' },
    ]);
  });

  it('reports every violation of every item at once', () => {
    const body = {
      desirabilities: [
        job({ id: 'a/b', weight: -2 }, { platform: 'x', label: 'tao' }),
        { source_name: 'facebook', label_weights: { 'r/x': 0 } },
        job(
          { id: 'ok' },
          { platform: 'reddit', label: null, keyword: null, post_end_datetime: 'soon' },
        ),
        7,
      ],
      extra: true,
    };
    expect(violations(body)).toEqual([
      { loc: [...ROOT, 0, 'id'], type: 'value_error' },
      { loc: [...ROOT, 0, 'weight'], type: 'greater_than' },
      { loc: [...ROOT, 0, 'params', 'label'], type: 'value_error' },
      { loc: [...ROOT, 1, 'source_name'], type: 'enum' },
      { loc: [...ROOT, 1, 'label_weights', 'r/x'], type: 'greater_than' },
      { loc: [...ROOT, 2, 'params', 'post_end_datetime'], type: 'value_error' },
      { loc: [...ROOT, 2, 'params'], type: 'value_error' },
      { loc: [...ROOT, 3], type: 'dict_type' },
      { loc: ['body', 'extra'], type: 'extra_forbidden' },
    ]);
  });

  it('keeps the submission exactly as sent', () => {
    const items = [
      job({ weight: 7 }),
      { source_name: 'Reddit', label_weights: { '/r/Bitcoin': 3 } },
    ];
    const submission = parsed(...items);
    expect(submission.submitted).toEqual([
      job({ weight: 7 }),
      { source_name: 'Reddit', label_weights: { '/r/Bitcoin': 3 } },
    ]);
  });
});

describe(parseDesirabilityList.name, () => {
  it('reports locations from the given root', () => {
    const result = parseDesirabilityList([{ id: 'a', weight: 1, params: { platform: 'x' } }], []);
    expect(result.ok ? [] : result.errors.map((error) => error.loc)).toEqual([[0, 'params']]);
  });

  // The owner's list is never registered: its labels keep their first generation's id.
  it('holds final generated ids against the given ones, at the later job', () => {
    const id = legacyJobId('x', '#tao');
    const result = parseDesirabilityList(
      [
        { source_name: 'x', label_weights: { '#tao': 1 } },
        { id, weight: 1, params: { platform: 'x', label: '#ai' } },
      ],
      [],
    );
    expect(result.ok ? [] : result.errors).toEqual([
      {
        loc: [1, 'id'],
        msg: `Value error, id '${id}' is already used by another job of this submission`,
        type: 'value_error',
      },
    ]);
  });
});
