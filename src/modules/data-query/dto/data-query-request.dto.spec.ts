import { validationErrors } from '../../../../test/support/validation';
import { DataQueryRequestDto } from './data-query-request.dto';

const NOW = new Date('2026-11-20T12:00:00.000Z');

const errorsFor = (body: object) =>
  validationErrors(DataQueryRequestDto, { source: 'x', ...body }, 'body', NOW);

const afterEnd = {
  loc: ['body', 'start_date'],
  msg: 'Value error, start_date must not be after end_date',
  type: 'value_error',
};
const afterNow = {
  loc: ['body', 'start_date'],
  msg: 'Value error, start_date must not be after now (the end of a query without end_date)',
  type: 'value_error',
};

describe(`${DataQueryRequestDto.name}'s range`, () => {
  it('takes a start_date equal to end_date, and refuses one after it', async () => {
    const end = '2026-11-19T10:00:00Z';
    expect(await errorsFor({ start_date: end, end_date: end })).toEqual([]);
    expect(await errorsFor({ start_date: '2026-11-19T10:00:01Z', end_date: end })).toEqual([
      afterEnd,
    ]);
  });

  it('ends now, on the clock of the service, without end_date', async () => {
    expect(await errorsFor({ start_date: NOW.toISOString() })).toEqual([]);
    expect(await errorsFor({ start_date: '2026-11-20T12:00:00.001Z' })).toEqual([afterNow]);
  });

  // With end_date a start after now was asked of miners, whose answers could only be empty.
  it('refuses a start_date after now whatever end_date says, naming the earlier bound', async () => {
    const notAfterNow = { ...afterNow, msg: 'Value error, start_date must not be after now' };
    expect(await errorsFor({ start_date: '2027-01-01', end_date: '2027-02-01' })).toEqual([
      notAfterNow,
    ]);
    expect(
      await errorsFor({ start_date: '2026-11-20T12:00:00.0005Z', end_date: '2027-01-01' }),
    ).toEqual([notAfterNow]);
    // After both: said of the earlier, so that one change of start_date meets both.
    expect(await errorsFor({ start_date: '2027-02-01', end_date: '2027-01-01' })).toEqual([
      notAfterNow,
    ]);
    expect(await errorsFor({ start_date: '2027-01-01', end_date: '2026-11-01' })).toEqual([
      afterEnd,
    ]);
    expect(await errorsFor({ start_date: '2026-11-21', end_date: NOW.toISOString() })).toEqual([
      afterEnd,
    ]);
    // A range from the past into the future is still a range (it ends when the data does).
    expect(await errorsFor({ start_date: NOW.toISOString(), end_date: '2027-01-01' })).toEqual([]);
    expect(await errorsFor({ start_date: '2026-11-01', end_date: '2026-11-20' })).toEqual([]);
  });

  // Dates kept to the millisecond for storage and miners were compared so: a start 100 ns after
  // its end was the same instant, and passed.
  it('compares start_date with end_date to the nanosecond they are written to', async () => {
    const end = '2026-11-19T10:00:00Z';
    expect(await errorsFor({ start_date: '2026-11-19T10:00:00.0000001Z', end_date: end })).toEqual([
      afterEnd,
    ]);
    expect(
      await errorsFor({ start_date: end, end_date: '2026-11-19T10:00:00.000000001Z' }),
    ).toEqual([]);
    expect(
      await errorsFor({
        start_date: '2026-11-19T10:00:00.123456789Z',
        end_date: '2026-11-19T12:00:00.123456789+02:00',
      }),
    ).toEqual([]);
    // A date-only end_date is its day's last millisecond, 23:59:59.999 (parseIsoEndDate).
    expect(
      await errorsFor({ start_date: '2026-11-19T23:59:59.999Z', end_date: '2026-11-19' }),
    ).toEqual([]);
    expect(
      await errorsFor({ start_date: '2026-11-19T23:59:59.9995Z', end_date: '2026-11-19' }),
    ).toEqual([afterEnd]);
  });

  it('compares start_date with now to the nanosecond: now + 0.5 ms is after it', async () => {
    expect(await errorsFor({ start_date: '2026-11-20T12:00:00.0005Z' })).toEqual([afterNow]);
    expect(await errorsFor({ start_date: '2026-11-20T12:00:00.000000Z' })).toEqual([]);
  });

  // Checked by the service once the DTO had passed, it was a second 422 (an audit's finding).
  it('is listed with the other fields in one 422, in the order of the schema', async () => {
    expect(
      await errorsFor({ usernames: ['@'], start_date: '2026-11-21', limit: 0, extra: 1 }),
    ).toEqual([
      expect.objectContaining({ loc: ['body', 'usernames', 0], type: 'value_error' }),
      afterNow,
      expect.objectContaining({ loc: ['body', 'limit'], type: 'greater_than_equal' }),
      expect.objectContaining({ loc: ['body', 'extra'], type: 'extra_forbidden' }),
    ]);
  });

  it('is not compared with an end_date that is no date: that one is told alone', async () => {
    expect(await errorsFor({ start_date: '2026-11-21', end_date: 'soon' })).toEqual([
      expect.objectContaining({ loc: ['body', 'end_date'], type: 'value_error' }),
    ]);
  });
});
