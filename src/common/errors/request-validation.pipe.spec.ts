import { IsArray, IsIn, IsOptional, IsString } from 'class-validator';
import { validated } from '../../../test/support/validation';
import { IsInteger } from '../validation/is-integer';
import { MaxCharacters } from '../validation/text-length';
import { RequestValidationPipe } from './request-validation.pipe';
import { ValidationErrorItem } from './validation-error-item';

class Listing {
  @IsOptional()
  @IsInteger()
  limit?: number;

  @IsOptional()
  @IsIn(['true', 'false'])
  is_active?: string;

  @IsOptional()
  @IsArray()
  @IsString({ each: true })
  labels?: string[];
}

/** A query string as Express's parser hands it over: a repeated name as an array of values. */
const validatedQuery = (query: Record<string, string | string[]>) =>
  validated(Listing, query, 'query');

describe(`${RequestValidationPipe.name} on a query string`, () => {
  // FastAPI reads a repeated parameter by its last value (Starlette keeps the last); before,
  // `?limit=2&limit=3` was refused as "Input should be a valid integer".
  it('takes the last value of a parameter given more than once', async () => {
    expect(await validatedQuery({ limit: ['2', '3'], is_active: ['true', 'false'] })).toEqual(
      Object.assign(new Listing(), { limit: 3, is_active: 'false' }),
    );
  });

  it('checks the last value as it would a single one', async () => {
    expect(await validatedQuery({ limit: ['2', 'x'] })).toEqual<ValidationErrorItem[]>([
      {
        loc: ['query', 'limit'],
        msg: 'Input should be a valid integer, unable to parse string as an integer',
        type: 'int_parsing',
      },
    ]);
  });

  it('keeps every value of a list parameter', async () => {
    expect(await validatedQuery({ labels: ['#a', '#b'] })).toEqual(
      Object.assign(new Listing(), { labels: ['#a', '#b'] }),
    );
  });

  it('ignores a parameter it does not know, repeated or not', async () => {
    expect(await validatedQuery({ limit: '2', unknown: ['1', '2'] })).toEqual(
      Object.assign(new Listing(), { limit: 2 }),
    );
  });
});

class Conditions {
  @IsOptional()
  @IsString()
  @MaxCharacters(4)
  'if-match'?: string;
}

describe(`${RequestValidationPipe.name} on headers`, () => {
  it('reports a header at ["header", name], by its name in lower case', async () => {
    expect(await validated(Conditions, { 'if-match': '"abcd"' }, 'header')).toEqual<
      ValidationErrorItem[]
    >([
      {
        loc: ['header', 'if-match'],
        msg: 'String should have at most 4 characters',
        type: 'string_too_long',
        ctx: { max_length: 4 },
      },
    ]);
  });

  it('passes on the headers it names and ignores the others', async () => {
    expect(
      await validated(Conditions, { 'if-match': '"ab"', host: 'localhost' }, 'header'),
    ).toEqual(Object.assign(new Conditions(), { 'if-match': '"ab"' }));
  });

  it('leaves a custom parameter that is not the headers alone', async () => {
    const headers = { 'if-match': '"abcd"' };
    expect(await validated(Conditions, headers, 'custom')).toBe(headers);
  });
});
