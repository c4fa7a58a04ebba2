import { createKey } from '../support/fixtures';
import { startTestApp, TEST_MASTER_KEY, TestApp } from '../support/test-app';

// What the document says of a request body is what the service accepts: an optional field takes
// `null` exactly when the document marks it `nullable` (class-validator's IsOptional lets null
// through, and five fields took it undocumented; an audit found them).

interface Schema {
  $ref?: string;
  allOf?: Schema[];
  oneOf?: Schema[];
  type?: string;
  nullable?: boolean;
  properties?: Record<string, Schema>;
  required?: string[];
  items?: Schema;
}

interface OptionalField {
  /** Where the field is in the body, as a 422's `loc` names it after `body`. */
  path: (string | number)[];
  nullable: boolean;
}

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

describe('null in request bodies', () => {
  let app: TestApp;
  let schemas: Record<string, Schema>;
  let keyId: string;

  beforeAll(async () => {
    app = await startTestApp({ RATE_LIMIT_REGULAR: '10000' });
    const document = (await app.http.get('/openapi.json').expect(200)).body;
    schemas = document.components.schemas;
    ({ id: keyId } = await createKey(app, { name: 'to change' }));
  });
  afterAll(() => app.close());

  const resolve = (schema: Schema): Schema => {
    if (schema.$ref) return resolve(schemas[schema.$ref.split('/').pop()!]);
    if (schema.allOf?.length === 1) return { ...resolve(schema.allOf[0]), ...without(schema) };
    return schema;
  };
  const without = ({ allOf: _, ...rest }: Schema): Schema => rest;

  /** Every optional property the example reaches, with whether the document lets it be null. */
  const optionalFields = (
    schema: Schema,
    value: Json,
    path: (string | number)[],
  ): OptionalField[] => {
    const resolved = resolve(schema);
    if (Array.isArray(value))
      return value.flatMap((item, index) =>
        optionalFields(resolved.items!, item, [...path, index]),
      );
    if (value === null || typeof value !== 'object') return [];
    const variant = resolved.oneOf
      ? resolve(resolved.oneOf.find((one) => fits(resolve(one), value))!)
      : resolved;
    return Object.entries(variant.properties ?? {}).flatMap(([name, property]) => {
      const here = [...path, name];
      const nested = name in value ? optionalFields(property, value[name], here) : [];
      if (variant.required?.includes(name)) return nested;
      const nullable = property.nullable === true || resolve(property).nullable === true;
      return [{ path: here, nullable }, ...nested];
    });
  };
  const fits = (schema: Schema, value: { [key: string]: Json }) =>
    (schema.required ?? []).every((name) => name in value);

  const withNull = (body: Json, path: (string | number)[]): Json => {
    const copy = structuredClone(body) as { [key: string]: Json };
    let at = copy as Json;
    for (const step of path.slice(0, -1)) at = (at as { [key: string]: Json })[step];
    (at as { [key: string]: Json })[path.at(-1)!] = null;
    return copy;
  };

  // Each request's body is `body(n)`, n counting from 0: a task id stands for one task's params.
  const operations: [string, 'post' | 'patch', () => string, string, (n: number) => Json][] = [
    [
      'POST /keys',
      'post',
      () => '/api/v1/keys',
      'APIKeyCreate',
      () => ({ name: 'n', tier: 'regular' }),
    ],
    [
      'PATCH /keys/{id}',
      'patch',
      () => `/api/v1/keys/${keyId}`,
      'APIKeyUpdate',
      () => ({ name: 'n', expires_at: '2099-01-01T00:00:00Z', rate_limit: 50 }),
    ],
    [
      'POST /on_demand_data_request',
      'post',
      () => '/api/v1/on_demand_data_request',
      'DataQueryRequest',
      () => ({
        source: 'x',
        usernames: ['a'],
        keywords: ['b'],
        keyword_mode: 'any',
        start_date: '2026-01-01',
        end_date: '2026-01-02',
        limit: 5,
      }),
    ],
    [
      'POST /set_desirabilities',
      'post',
      () => '/api/v1/set_desirabilities',
      'DesirabilityRequest',
      (n) => ({
        desirabilities: [
          {
            id: `nulls-${n}`,
            weight: 1,
            params: {
              platform: 'x',
              label: '#nulls',
              keyword: 'k',
              post_start_datetime: '2026-01-01T00:00:00Z',
              post_end_datetime: '2026-01-02T00:00:00Z',
            },
          },
        ],
      }),
    ],
  ];

  it.each(operations)('%s', async (_name, method, path, schemaName, body) => {
    const send = (value: Json) =>
      app.http[method](path())
        .set('X-API-Key', TEST_MASTER_KEY)
        .send(value as object);
    expect((await send(body(0))).status).toBe(200);
    const fields = optionalFields({ $ref: `#/${schemaName}` }, body(0), []);
    expect(fields.length).toBeGreaterThan(0);
    const answers = [];
    for (const [index, field] of fields.entries()) {
      const response = await send(withNull(body(index + 1), field.path));
      const refused =
        response.status === 422 &&
        (response.body.detail as { loc: unknown[] }[]).some(
          (error) => JSON.stringify(error.loc) === JSON.stringify(['body', ...field.path]),
        );
      // Anything but that field's own refusal must be an acceptance.
      if (!refused)
        expect([field.path, response.status, response.body]).toEqual([
          field.path,
          200,
          expect.anything(),
        ]);
      answers.push({ field: field.path.join('.'), nullable: field.nullable, refused });
    }
    // Documented nullable and refused, or documented not nullable and taken.
    expect(answers.filter((answer) => answer.nullable === answer.refused)).toEqual([]);
  });
});
