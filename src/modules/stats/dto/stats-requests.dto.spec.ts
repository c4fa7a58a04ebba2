import { validationErrors } from '../../../../test/support/validation';
import { LabelQueryDto, QueryBucketQueryDto } from './stats-requests.dto';

// 10:30 in hour 490,906 since the epoch: the last complete hour is 490,905.
const NOW = new Date('2026-01-01T10:30:00Z');
const LAST_COMPLETE_HOUR = 490_905;

const tooShort = {
  loc: ['query', 'label'],
  msg: 'String should have at least 1 character',
  type: 'string_too_short',
  ctx: { min_length: 1 },
};

describe(LabelQueryDto.name, () => {
  const errorsFor = (query: object) => validationErrors(LabelQueryDto, query, 'query', NOW);

  it.each(['', '  ', '\t\n', '\u00a0'])(
    'refuses the label %j as too short: it is empty once trimmed',
    async (label) => {
      expect(await errorsFor({ label })).toEqual([tooShort]);
    },
  );

  it('takes a label with surrounding white space (trimmed later)', async () => {
    expect(await errorsFor({ label: ' #BitCoin ' })).toEqual([]);
  });
});

describe(`${QueryBucketQueryDto.name}'s range`, () => {
  const errorsFor = (query: object) => validationErrors(QueryBucketQueryDto, query, 'query', NOW);
  const afterEnd = {
    loc: ['query', 'start_bucket'],
    msg: 'Value error, start_bucket must not be after end_bucket',
    type: 'value_error',
  };
  // Without end_bucket the message says what the end was: the client sent none (a reviewer's
  // finding: "after end_bucket" alone named a value it never gave).
  const afterDefaultEnd = {
    ...afterEnd,
    msg:
      'Value error, start_bucket must not be after end_bucket (by default the last complete ' +
      `hour, ${LAST_COMPLETE_HOUR})`,
  };

  it('refuses a start_bucket after end_bucket with a 422 on start_bucket', async () => {
    expect(await errorsFor({ start_bucket: '7', end_bucket: '7' })).toEqual([]);
    expect(await errorsFor({ start_bucket: '8', end_bucket: '7' })).toEqual([afterEnd]);
  });

  it('ends at the last complete hour, on the clock of the service, without end_bucket', async () => {
    expect(await errorsFor({ start_bucket: String(LAST_COMPLETE_HOUR) })).toEqual([]);
    expect(await errorsFor({ start_bucket: String(LAST_COMPLETE_HOUR + 1) })).toEqual([
      afterDefaultEnd,
    ]);
    // Given, the same end is named as the client's.
    expect(
      await errorsFor({
        start_bucket: String(LAST_COMPLETE_HOUR + 1),
        end_bucket: String(LAST_COMPLETE_HOUR),
      }),
    ).toEqual([afterEnd]);
  });

  // Checked by the service once the DTO had passed, it was a second 422 (an audit's finding).
  it('is listed with a blank label in one 422, in the order of the schema', async () => {
    expect(await errorsFor({ start_bucket: String(LAST_COMPLETE_HOUR + 1), label: ' ' })).toEqual([
      tooShort,
      afterDefaultEnd,
    ]);
  });

  it('is not compared with an end_bucket that fails its own checks: that one is told alone', async () => {
    expect(await errorsFor({ start_bucket: '10', end_bucket: '-1' })).toEqual([
      expect.objectContaining({ loc: ['query', 'end_bucket'], type: 'greater_than_equal' }),
    ]);
  });
});
