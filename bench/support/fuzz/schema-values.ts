import fc from 'fast-check';
import { OpenApiDocument, resolveSchema, Schema } from '../openapi';
import { anyJsonValue, oddString } from './values';

/**
 * Values that mostly satisfy `schema` (its enums in any case, lengths and bounds at and just
 * past their limits, its examples), so that requests get past validation into the services.
 * `name` hints at dates, which the document types as plain strings.
 */
export function schemaValue(
  document: OpenApiDocument,
  input: Parameters<typeof resolveSchema>[1],
  name = '',
  depth = 0,
): fc.Arbitrary<unknown> {
  const schema = resolveSchema(document, input);
  const value = plainValue(document, schema, name, depth);
  return schema.nullable ? fc.oneof({ weight: 4, arbitrary: value }, fc.constant(null)) : value;
}

function plainValue(
  document: OpenApiDocument,
  schema: Schema,
  name: string,
  depth: number,
): fc.Arbitrary<unknown> {
  const alternatives = schema.oneOf ?? schema.anyOf;
  if (alternatives) {
    return fc.oneof(...alternatives.map((item) => schemaValue(document, item, name, depth)));
  }
  const example = schema.example as unknown;
  const withExample = (arbitrary: fc.Arbitrary<unknown>): fc.Arbitrary<unknown> =>
    example === undefined || example === null
      ? arbitrary
      : fc.oneof({ weight: 2, arbitrary: fc.constant(example) }, { weight: 3, arbitrary });
  if (schema.enum) {
    const values = schema.enum.map(String);
    return fc.constantFrom(...values, ...values.map((v) => v.toUpperCase()), `${values[0]}x`);
  }
  switch (schema.type) {
    case 'string':
      return withExample(/date|time/i.test(name) ? dateString : boundedString(schema));
    case 'number':
    case 'integer':
      return withExample(boundedNumber(schema));
    case 'boolean':
      return fc.boolean();
    case 'array': {
      if (depth > 4) return fc.constant([]);
      const maxLength = Math.min((schema.maxItems ?? 4) + 1, 6);
      return withExample(
        fc.array(schemaValue(document, schema.items, name, depth + 1), { maxLength }),
      );
    }
    case 'object':
      return withExample(objectValue(document, schema, depth));
    default:
      return anyJsonValue;
  }
}

function objectValue(document: OpenApiDocument, schema: Schema, depth: number) {
  const properties = Object.entries(schema.properties ?? {});
  if (properties.length === 0) {
    const values =
      typeof schema.additionalProperties === 'object'
        ? schemaValue(document, schema.additionalProperties, '', depth + 1)
        : anyJsonValue;
    return fc.dictionary(
      fc.oneof(fc.constantFrom('#tao', 'r/bitcoin', '/r/x'), oddString(12)),
      values,
      {
        maxKeys: 4,
      },
    );
  }
  const model = Object.fromEntries(
    properties.map(([key, property]) => [key, schemaValue(document, property, key, depth + 1)]),
  );
  return fc.record(model, { requiredKeys: schema.required ?? [] });
}

function boundedString(schema: Schema): fc.Arbitrary<string> {
  const min = schema.minLength ?? 0;
  const max = schema.maxLength ?? 60;
  return fc.oneof(
    { weight: 3, arbitrary: fc.string({ minLength: min, maxLength: Math.min(max, 60) }) },
    { weight: 2, arbitrary: oddString(Math.min(max, 60)) },
    // Exactly at the limit and one past it, in code points and in UTF-16 units.
    {
      weight: 1,
      arbitrary: fc.constantFrom('x'.repeat(max), 'x'.repeat(max + 1), '😀'.repeat(max)),
    },
    { weight: 1, arbitrary: fc.constantFrom('', ' ', '  padded  ') },
  );
}

function boundedNumber(schema: Schema): fc.Arbitrary<number> {
  const min = schema.minimum ?? -1e6;
  const max = schema.maximum ?? 1e6;
  return fc.oneof(
    fc.integer({ min: Math.ceil(min), max: Math.floor(max) }),
    fc.constantFrom(min, max, min - 1, max + 1, (min + max) / 2 + 0.5),
    fc.double({ noNaN: true, noDefaultInfinity: true }),
  );
}

const NOW = Date.now();
const DAY = 86_400_000;

/** ISO dates around now (valid, reversed ranges, far past and future) and near-misses. */
const dateString: fc.Arbitrary<string> = fc.oneof(
  {
    weight: 4,
    arbitrary: fc
      .integer({ min: -40, max: 10 })
      .map((days) => new Date(NOW + days * DAY).toISOString()),
  },
  { weight: 1, arbitrary: fc.integer({ min: -40, max: 10 }).map((d) => isoDay(NOW + d * DAY)) },
  {
    weight: 1,
    arbitrary: fc.constantFrom(
      '2026-02-30',
      '2026-13-01T00:00:00Z',
      '2026-01-01T25:00:00',
      '0000-01-01',
      '+275760-09-13T00:00:00.000Z',
      '-271821-04-20T00:00:00.000Z',
      '9999-12-31T23:59:59.999999999Z',
      '2026-01-01T00:00:00+99:00',
      'now',
      '1700000000',
      '',
    ),
  },
  { weight: 1, arbitrary: oddString(30) },
);

function isoDay(time: number): string {
  return new Date(time).toISOString().slice(0, 10);
}
