import { validationErrors } from '../../../../test/support/validation';
import { ApiKeyCreateDto } from './api-key-create.dto';
import { ApiKeyUpdateDto } from './api-key-update.dto';

const NOW = new Date('2026-11-20T12:00:00.000Z');
const PAST = {
  loc: ['body', 'expires_at'],
  msg: 'Input should be in the future',
  type: 'datetime_future',
};

describe.each([
  ['creation', ApiKeyCreateDto, { name: 'team' }],
  ['update', ApiKeyUpdateDto, {}],
])('A key expiry on %s', (_, dto, fields) => {
  const errorsFor = (body: object) => validationErrors(dto, { ...fields, ...body }, 'body', NOW);

  it('is refused at the present instant, by the clock of the service: the key would be born expired', async () => {
    expect(await errorsFor({ expires_at: NOW.toISOString() })).toEqual([PAST]);
    expect(await errorsFor({ expires_at: '2026-11-20T12:00:00.001Z' })).toEqual([]);
    expect(await errorsFor({ expires_at: null })).toEqual([]);
  });

  // Stored and enforced to the millisecond: 0.4 ms after now would be stored as now, a key
  // expired at once (a review's finding, after a change that compared it to the digit).
  it('is compared with the clock to the millisecond it is stored to', async () => {
    expect(await errorsFor({ expires_at: '2026-11-20T12:00:00.0004Z' })).toEqual([PAST]);
    expect(await errorsFor({ expires_at: '2026-11-20T12:00:00.000000001Z' })).toEqual([PAST]);
    expect(await errorsFor({ expires_at: '2026-11-20T13:00:00.0009+01:00' })).toEqual([PAST]);
    expect(await errorsFor({ expires_at: '2026-11-20T12:00:00.001Z' })).toEqual([]);
  });

  // Checked by the service once the DTO had passed, it was a second 422 (an audit's finding).
  it('in the past is listed with a bad rate_limit in one 422, in the order of the schema', async () => {
    expect(await errorsFor({ rate_limit: 1_000_001, expires_at: '2001-01-01T00:00:00Z' })).toEqual([
      PAST,
      {
        loc: ['body', 'rate_limit'],
        msg: 'Input should be less than or equal to 1000000',
        type: 'less_than_equal',
        ctx: { le: 1_000_000 },
      },
    ]);
  });

  it('that is no RFC 3339 date-time is told so alone, not compared with the clock', async () => {
    expect(await errorsFor({ expires_at: '2001-01-01' })).toEqual([
      expect.objectContaining({ loc: ['body', 'expires_at'], type: 'value_error' }),
    ]);
  });
});

describe.each([
  ['creation', ApiKeyCreateDto],
  ['update', ApiKeyUpdateDto],
])('A key name on %s', (_, dto) => {
  const errorsFor = (name: string) => validationErrors(dto, { name }, 'body', NOW);
  const NOT_PRINTABLE = {
    loc: ['body', 'name'],
    msg:
      'Value error, name must be printable: no control characters (CR, LF, TAB, …), bidi ' +
      'controls or invisible format characters (zero-width space, …)',
    type: 'value_error',
  };

  // A fuzz audit's finding: `\u202eabc` was accepted, shown reversed in every list of keys, and
  // `ci-bot\u200b` would list exactly as `ci-bot`.
  it('is refused when it holds a control, bidi or invisible format character', async () => {
    for (const name of [
      '\u202eabc',
      'ci-bot\u200b',
      'a\u2066b',
      'a\ufeffb',
      'a\u001b[31mb',
      'a\nb',
    ])
      expect(await errorsFor(name)).toEqual([NOT_PRINTABLE]);
  });

  it('keeps the joiners emoji and some scripts are written with', async () => {
    for (const name of ['👩\u200d💻 team', 'می\u200cخواهم', 'analytics-team'])
      expect(await errorsFor(name)).toEqual([]);
  });
});
