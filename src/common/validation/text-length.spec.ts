import { IsOptional } from 'class-validator';
import { validationErrors } from '../../../test/support/validation';
import { characterCount } from '../characters';
import { MaxCharacters, MinCharacters } from './text-length';

class Named {
  @MinCharacters(1)
  @MaxCharacters(3)
  name: string;

  @IsOptional()
  @MaxCharacters(2, { each: true })
  tags?: string[];
}

const refusals = (body: object) => validationErrors(Named, body, 'body');

const TOO_LONG = {
  type: 'string_too_long',
  msg: 'String should have at most 3 characters',
  ctx: { max_length: 3 },
};

describe('text lengths', () => {
  it('counts code points, as pydantic and Postgres do', () => {
    expect(characterCount('abc')).toBe(3);
    expect(characterCount('😀😀')).toBe(2);
    // validator.js' isLength counts these as 1 and 2: what Postgres stores is 2 and 4.
    expect(characterCount('a\uFE0F')).toBe(2);
    expect(characterCount('❤\uFE0F❤\uFE0F')).toBe(4);
    expect(characterCount('e\u0301')).toBe(2);
    expect(characterCount('x\ud800')).toBe(2);
  });

  it.each([
    ['abc', []],
    ['😀😀😀', []],
    ['ab\uFE0F', []],
    ['abc\uFE0F', [{ loc: ['body', 'name'], ...TOO_LONG }]],
    ['b\uFE0E\uFE0E\uFE0E', [{ loc: ['body', 'name'], ...TOO_LONG }]],
    ['😀😀😀😀', [{ loc: ['body', 'name'], ...TOO_LONG }]],
  ])('refuses %j past the limit with string_too_long, and only then', async (name, expected) => {
    expect(await refusals({ name })).toEqual(expected);
  });

  it('refuses the empty string with string_too_short', async () => {
    expect(await refusals({ name: '' })).toEqual([
      {
        loc: ['body', 'name'],
        type: 'string_too_short',
        msg: 'String should have at least 1 character',
        ctx: { min_length: 1 },
      },
    ]);
  });

  it('checks each element of a list at its own index', async () => {
    expect(await refusals({ name: 'a', tags: ['ok', 'o\uFE0Fk'] })).toEqual([
      {
        loc: ['body', 'tags', 1],
        type: 'string_too_long',
        msg: 'String should have at most 2 characters',
        ctx: { max_length: 2 },
      },
    ]);
  });
});
