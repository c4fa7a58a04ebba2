import { IsOptional, Max, Min } from 'class-validator';
import { validated } from '../../../test/support/validation';
import { decimalInteger, IsInteger } from './is-integer';

class Page {
  @IsOptional()
  @IsInteger()
  @Min(-5)
  @Max(1000)
  limit?: number;
}

const validatedLimit = (value: unknown, type: 'body' | 'query') =>
  validated(Page, { limit: value }, type);

const NOT_PARSED = 'Input should be a valid integer, unable to parse string as an integer';

describe(IsInteger.name, () => {
  it.each(['42', '007', '-5', '0', '-0'])('reads %j as its integer', (text) => {
    expect(decimalInteger(text)).toBe(Math.abs(Number(text)) === 0 ? 0 : Number(text));
    expect(Object.is(decimalInteger(text), -0)).toBe(false);
  });

  it.each(['', ' 5', '5 ', '+5', '0x10', '1e2', '1.5', '5.0', '1_000', '٣', '9007199254740993'])(
    'leaves %j as it came',
    (text) => expect(decimalInteger(text)).toBe(text),
  );

  it.each(['body', 'query'] as const)('reads digits in a %s into the number', async (type) => {
    expect(await validatedLimit('17', type)).toEqual(Object.assign(new Page(), { limit: 17 }));
    expect(await validatedLimit(17, type)).toEqual(Object.assign(new Page(), { limit: 17 }));
  });

  it.each([
    ['1e2', 'int_parsing', NOT_PARSED],
    ['', 'int_parsing', NOT_PARSED],
    [1.5, 'int_from_float', 'Input should be a valid integer, got a number with a fractional part'],
    [true, 'int_type', 'Input should be a valid integer'],
    [{ a: 1 }, 'int_type', 'Input should be a valid integer'],
    [['1'], 'int_type', 'Input should be a valid integer'],
  ])('refuses %j as pydantic does: %s, and nothing else', async (value, type, msg) => {
    expect(await validatedLimit(value, 'body')).toEqual([{ loc: ['body', 'limit'], type, msg }]);
  });

  // JSON's 1e400 and -1e400, as JSON.parse (and Python's json) read them: no fraction to speak of.
  it.each([Infinity, -Infinity])('refuses %s as pydantic does: finite_number', async (value) => {
    expect(await validatedLimit(value, 'body')).toEqual([
      { loc: ['body', 'limit'], type: 'finite_number', msg: 'Input should be a finite number' },
    ]);
  });

  it('checks the bounds of what it read', async () => {
    expect(await validatedLimit('-6', 'query')).toEqual([
      {
        loc: ['query', 'limit'],
        type: 'greater_than_equal',
        msg: 'Input should be greater than or equal to -5',
        ctx: { ge: -5 },
      },
    ]);
  });
});
