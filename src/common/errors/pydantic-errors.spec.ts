import { Clock } from '../clock/clock';
import { Type } from 'class-transformer';
import {
  ArrayMaxSize,
  IsArray,
  IsIn,
  IsInt,
  IsOptional,
  IsString,
  Max,
  ValidateBy,
  ValidateNested,
} from 'class-validator';
import { NotBlank } from '../validation/not-blank';
import { StorableText } from '../validation/storable-text';
import { MaxCharacters, MinCharacters } from '../validation/text-length';
import { validationErrors } from '../../../test/support/validation';
import { RequestValidationPipe } from './request-validation.pipe';

class Params {
  @IsIn(['x', 'reddit'])
  platform: string;
}

class Job {
  @IsString()
  @MaxCharacters(5)
  id: string;

  @ValidateNested()
  @Type(() => Params)
  params: Params;
}

class Body {
  @IsString()
  name: string;

  @IsOptional()
  @IsInt()
  @Max(10)
  count?: number;

  @IsOptional()
  @IsArray()
  @ArrayMaxSize(3)
  @IsString({ each: true })
  @MinCharacters(1, { each: true })
  tags?: string[];

  @IsOptional()
  @IsArray()
  @ValidateNested({ each: true })
  @Type(() => Job)
  jobs?: Job[];

  @IsOptional()
  @IsIn(['any', 'all', 'none'])
  mode?: string;

  @IsOptional()
  @IsArray()
  @ArrayMaxSize(1)
  @MaxCharacters(1, { each: true })
  initials?: string[];

  // As the stats' labels are checked (stats-requests.dto.ts): class-validator lists a field's
  // failures bottom-up, so the order pydantic reports them in is the ranking's doing.
  @IsOptional()
  @IsString()
  @NotBlank()
  @MaxCharacters(5)
  @StorableText()
  label?: string;
}

/** How many items of `Names.names` were checked. */
let namesChecked = 0;

class Names {
  @IsArray()
  @ArrayMaxSize(10)
  @ValidateBy(
    { name: 'counted', validator: { validate: () => (namesChecked += 1) > 0 } },
    { each: true },
  )
  names: string[];
}

const errorsFor = (
  value: unknown,
  type: 'body' | 'query' = 'body',
  metatype: new () => object = Body,
) => validationErrors(metatype, value, type);

describe(RequestValidationPipe.name, () => {
  it('passes a valid body through as a DTO instance', async () => {
    const result = await new RequestValidationPipe(new Clock()).transform(
      { name: 'a', count: 3 },
      { type: 'body', metatype: Body },
    );
    expect(result).toBeInstanceOf(Body);
  });

  it('reports every failing field at once, one entry each', async () => {
    const errors = await errorsFor({ count: 11, tags: ['a', '', 3], extra: true });
    expect(errors).toEqual([
      { loc: ['body', 'name'], msg: 'Field required', type: 'missing' },
      {
        loc: ['body', 'count'],
        msg: 'Input should be less than or equal to 10',
        type: 'less_than_equal',
        ctx: { le: 10 },
      },
      {
        loc: ['body', 'tags', 1],
        msg: 'String should have at least 1 character',
        type: 'string_too_short',
        ctx: { min_length: 1 },
      },
      { loc: ['body', 'tags', 2], msg: 'Input should be a valid string', type: 'string_type' },
      { loc: ['body', 'extra'], msg: 'Extra inputs are not permitted', type: 'extra_forbidden' },
    ]);
  });

  it.each(['toString', 'valueOf', 'constructor', 'hasOwnProperty', '__proto__'])(
    'refuses a body field named after an object member (%s) as extra_forbidden',
    async (name) => {
      const errors = await errorsFor(JSON.parse(`{"name": "a", "${name}": 1}`) as object);
      expect(errors).toEqual([
        { loc: ['body', name], msg: 'Extra inputs are not permitted', type: 'extra_forbidden' },
      ]);
    },
  );

  it('reports only the type error of a field whose type is wrong', async () => {
    expect(await errorsFor({ name: 'a', count: 'ten' })).toEqual([
      {
        loc: ['body', 'count'],
        msg: 'Input should be a valid integer, unable to parse string as an integer',
        type: 'int_parsing',
      },
    ]);
    expect(await errorsFor({ name: 'a', tags: 'a' })).toEqual([
      { loc: ['body', 'tags'], msg: 'Input should be a valid list', type: 'list_type' },
    ]);
  });

  it.each([5, true, {}, { '0': 'a' }])(
    'reports a list field given %j as no list, not as an item of the wrong type',
    async (tags) => {
      expect(await errorsFor({ name: 'a', tags })).toEqual([
        { loc: ['body', 'tags'], msg: 'Input should be a valid list', type: 'list_type' },
      ]);
    },
  );

  it('reports one error for a field failing several checks, the first pydantic makes', async () => {
    // Too long and not storable: pydantic checks the length first.
    expect(await errorsFor({ name: 'a', label: 'abc\u0000def' })).toEqual([
      {
        loc: ['body', 'label'],
        msg: 'String should have at most 5 characters',
        type: 'string_too_long',
        ctx: { max_length: 5 },
      },
    ]);
    // Short enough: then its pattern (text Postgres can store).
    const [unstorable, ...rest] = await errorsFor({ name: 'a', label: 'a\u0000' });
    expect(unstorable).toMatchObject({ loc: ['body', 'label'], type: 'string_pattern_mismatch' });
    expect(rest).toEqual([]);
    // Only white space, and too long: pydantic strips it, then finds it too short.
    expect(await errorsFor({ name: 'a', label: ' '.repeat(6) })).toEqual([
      {
        loc: ['body', 'label'],
        msg: 'String should have at least 1 character',
        type: 'string_too_short',
        ctx: { min_length: 1 },
      },
    ]);
  });

  it('words its messages as pydantic does: one choice or several, one or more characters or items', async () => {
    expect(await errorsFor({ name: 'a', mode: 'some', initials: ['ab'] })).toEqual([
      {
        loc: ['body', 'mode'],
        msg: "Input should be 'any', 'all' or 'none'",
        type: 'enum',
        ctx: { expected: "'any', 'all' or 'none'" },
      },
      {
        loc: ['body', 'initials', 0],
        msg: 'String should have at most 1 character',
        type: 'string_too_long',
        ctx: { max_length: 1 },
      },
    ]);
    expect(await errorsFor({ name: 'a', initials: ['a', 'b'] })).toEqual([
      {
        loc: ['body', 'initials'],
        msg: 'List should have at most 1 item after validation, not 2',
        type: 'too_long',
        ctx: { field_type: 'List', max_length: 1, actual_length: 2 },
      },
    ]);
  });

  it('reports a null field as the wrong type, not as missing, as pydantic does', async () => {
    expect(await errorsFor({ name: null })).toEqual([
      { loc: ['body', 'name'], msg: 'Input should be a valid string', type: 'string_type' },
    ]);
  });

  it('reports a list too long alone, as pydantic stops reading it there', async () => {
    expect(await errorsFor({ name: 'a', tags: ['', '', '', ''] })).toEqual([
      {
        loc: ['body', 'tags'],
        msg: 'List should have at most 3 items after validation, not 4',
        type: 'too_long',
        ctx: { field_type: 'List', max_length: 3, actual_length: 4 },
      },
    ]);
    // Within bounds, each item reports its own error.
    expect(await errorsFor({ name: 'a', tags: ['a', ''] })).toEqual([
      {
        loc: ['body', 'tags', 1],
        msg: 'String should have at least 1 character',
        type: 'string_too_short',
        ctx: { min_length: 1 },
      },
    ]);
  });

  // 200,000 names, each transformed and checked before the 10-item bound was, held the event
  // loop for seconds (an audit's finding).
  it('reads a list too long no further than one item past its bound, and reports its length as sent', async () => {
    namesChecked = 0;
    const names = Array.from({ length: 200_000 }, (_, index) => `name${index}`);
    expect(await errorsFor({ names }, 'body', Names)).toEqual([
      {
        loc: ['body', 'names'],
        msg: 'List should have at most 10 items after validation, not 200000',
        type: 'too_long',
        ctx: { field_type: 'List', max_length: 10, actual_length: 200_000 },
      },
    ]);
    expect(namesChecked).toBeLessThanOrEqual(11);
    // Within its bound, every item is checked.
    namesChecked = 0;
    expect(await errorsFor({ names: names.slice(0, 10) }, 'body', Names)).toEqual([]);
    expect(namesChecked).toBe(10);
  });

  it("reports a list too long among the other fields' errors, in their order", async () => {
    const body = { count: 11, tags: Array.from({ length: 1000 }, () => ''), mode: 'some' };
    expect(await errorsFor(body)).toEqual([
      expect.objectContaining({ loc: ['body', 'name'], type: 'missing' }),
      expect.objectContaining({ loc: ['body', 'count'], type: 'less_than_equal' }),
      {
        loc: ['body', 'tags'],
        msg: 'List should have at most 3 items after validation, not 1000',
        type: 'too_long',
        ctx: { field_type: 'List', max_length: 3, actual_length: 1000 },
      },
      expect.objectContaining({ loc: ['body', 'mode'], type: 'enum' }),
    ]);
    expect(body.tags).toHaveLength(1000);
  });

  it('points into nested lists with integer indexes', async () => {
    const errors = await errorsFor({
      name: 'a',
      jobs: [
        { id: 'ok', params: { platform: 'x' } },
        { id: 'too-long', params: { platform: 'tiktok' } },
      ],
    });
    expect(errors).toEqual([
      expect.objectContaining({ loc: ['body', 'jobs', 1, 'id'], type: 'string_too_long' }),
      expect.objectContaining({
        loc: ['body', 'jobs', 1, 'params', 'platform'],
        type: 'enum',
        msg: "Input should be 'x' or 'reddit'",
      }),
    ]);
  });

  it('reports a nested object that is not one as model_type', async () => {
    expect(await errorsFor({ name: 'a', jobs: [{ id: 'ok', params: 'x' }] })).toEqual([
      {
        loc: ['body', 'jobs', 0, 'params'],
        msg: 'Input should be a valid dictionary or object to extract fields from',
        type: 'model_type',
      },
    ]);
  });

  it('reports a missing or non-object body at `body`', async () => {
    // A JSON `null` body is no body, as FastAPI reads it: missing, not a wrong type.
    for (const body of [undefined, null])
      expect(await errorsFor(body)).toEqual([
        { loc: ['body'], msg: 'Field required', type: 'missing' },
      ]);
    expect(await errorsFor([1])).toEqual([
      expect.objectContaining({ loc: ['body'], type: 'model_attributes_type' }),
    ]);
  });

  it('forbids unknown fields inside nested objects too, each at its own location', async () => {
    const errors = await errorsFor({
      name: 'a',
      jobs: [{ id: 'ok', params: { platform: 'x', extra: 1 }, note: 'n' }],
    });
    expect(errors).toHaveLength(2);
    expect(errors).toEqual(
      expect.arrayContaining([
        {
          loc: ['body', 'jobs', 0, 'params', 'extra'],
          msg: 'Extra inputs are not permitted',
          type: 'extra_forbidden',
        },
        {
          loc: ['body', 'jobs', 0, 'note'],
          msg: 'Extra inputs are not permitted',
          type: 'extra_forbidden',
        },
      ]),
    );
  });

  it('ignores unknown query parameters, as FastAPI does', async () => {
    expect(await errorsFor({ name: 'a', other: '1' }, 'query')).toEqual([]);
  });
});
