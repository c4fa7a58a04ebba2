import fc from 'fast-check';
import { OpenApiDocument, Operation } from '../openapi';
import { schemaValue } from './schema-values';
import { anyJsonValue, encodePathValue, hugeString, oddString, serializeJson } from './values';
import { contentType, extraHeaders, FuzzContext, keyHeader, KeyHeader } from './headers';

/** One generated request; `target` is the operation it aims at, for the per-endpoint counts. */
export interface FuzzCase {
  target: string;
  method: string;
  path: string;
  key: KeyHeader;
  headers: Record<string, string>;
  body?: string;
}

const OTHER_METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS', 'HEAD'];

/** Path parameter values: real ids, enums in any case, encoded junk, traversal, very long. */
function pathValue(
  document: OpenApiDocument,
  operation: Operation,
  name: string,
  context: FuzzContext,
) {
  const parameter = operation.parameters.find((p) => p.in === 'path' && p.name === name);
  const valid = parameter?.schema
    ? schemaValue(document, parameter.schema, name).map((v) => encodePathValue(String(v)))
    : fc.constant('x');
  return fc.oneof(
    { weight: 4, arbitrary: valid },
    { weight: 2, arbitrary: fc.constantFrom(...context.knownIds.map(encodePathValue)) },
    { weight: 3, arbitrary: oddString(30).map(encodePathValue) },
    {
      weight: 1,
      arbitrary: fc.constantFrom(
        '..',
        '.',
        '%2e%2e',
        '..%2F..%2Fetc%2Fpasswd',
        '%2F',
        '%00',
        '%',
        '%zz',
        '%E0%A4%A',
        '%C0%AF',
        '%F0%9F%98%80',
        '%ED%A0%80',
        '~',
        'a'.repeat(3_000),
        '%25'.repeat(2_000),
      ),
    },
  );
}

function queryString(document: OpenApiDocument, operation: Operation): fc.Arbitrary<string> {
  const parameters = operation.parameters.filter((p) => p.in === 'query');
  const documented = parameters.map((parameter) => {
    const value = parameter.schema
      ? schemaValue(document, parameter.schema, parameter.name).map(String)
      : oddString(20);
    const encoded = fc.oneof(
      { weight: 6, arbitrary: value.map((v) => [encodePathValue(v)]) },
      {
        weight: 1,
        arbitrary: fc.array(value.map(encodePathValue), { minLength: 2, maxLength: 3 }),
      },
      {
        weight: 1,
        arbitrary: fc.constantFrom(['%'], ['%zz'], ['%00'], [''], ['+'], ['a'.repeat(5_000)]),
      },
      { weight: 1, arbitrary: oddString(20).map((v) => [encodePathValue(v)]) },
    );
    return fc.option(
      encoded.map((values) => values.map((v) => `${parameter.name}=${v}`)),
      {
        nil: [],
      },
    );
  });
  const extra = fc.array(
    fc.oneof(
      fc
        .tuple(oddString(10), oddString(10))
        .map(([k, v]) => `${encodePathValue(k)}=${encodePathValue(v)}`),
      fc.constantFrom(
        'a[b][c]=1',
        'a[]=1&a[]=2',
        '__proto__[x]=1',
        '=',
        '&&',
        'x',
        'limit=1&limit=2',
      ),
    ),
    { maxLength: 2 },
  );
  return fc
    .tuple(fc.tuple(...documented), extra)
    .map(([pairs, more]) => [...pairs.flat(), ...more].join('&'));
}

/** A valid-ish body with one field (at any depth) replaced, removed, or an extra field added. */
function mutatedBody(document: OpenApiDocument, operation: Operation) {
  return fc
    .tuple(
      schemaValue(document, operation.bodySchema!),
      fc.constantFrom('none', 'none', 'replace', 'remove', 'add'),
      fc.array(fc.nat(), { maxLength: 4 }),
      anyJsonValue,
      oddString(12),
    )
    .map(([value, kind, route, replacement, name]) =>
      mutate(value, kind, route, replacement, name),
    );
}

function mutate(value: unknown, kind: string, route: number[], replacement: unknown, name: string) {
  if (kind === 'none' || typeof value !== 'object' || value === null) return value;
  const copy = structuredClone(value) as Record<string, unknown>;
  let parent = copy;
  for (const step of route) {
    const keys = Object.keys(parent);
    const child = keys.length > 0 ? parent[keys[step % keys.length]] : undefined;
    if (typeof child !== 'object' || child === null) break;
    parent = child as Record<string, unknown>;
  }
  const keys = Object.keys(parent);
  const key = keys.length > 0 ? keys[(route[0] ?? 0) % keys.length] : name;
  if (kind === 'remove') delete parent[key];
  else if (kind === 'add') parent[name] = replacement;
  else parent[key] = replacement;
  return copy;
}

const rawBody = fc.oneof(
  fc.constantFrom('{', '{"source": "x",', 'null', '[]', '"x"', '1', 'true', '{}}', '\u0000', 'NaN'),
  oddString(60),
  fc.uint8Array({ maxLength: 64 }).map((bytes) => Buffer.from(bytes).toString('latin1')),
  hugeString,
);

/** Bodies for an operation: mostly shaped like its schema, else any JSON, raw text or none. */
function body(document: OpenApiDocument, operation: Operation): fc.Arbitrary<string | undefined> {
  const json = anyJsonValue.map(serializeJson);
  if (!operation.bodySchema) {
    return fc.oneof(
      { weight: 8, arbitrary: fc.constant(undefined) },
      { weight: 1, arbitrary: json },
      { weight: 1, arbitrary: rawBody },
    );
  }
  return fc.oneof(
    { weight: 8, arbitrary: mutatedBody(document, operation).map(serializeJson) },
    { weight: 2, arbitrary: json },
    { weight: 1, arbitrary: rawBody },
    { weight: 1, arbitrary: fc.constant(undefined) },
  );
}

function pathFor(document: OpenApiDocument, operation: Operation, context: FuzzContext) {
  const parts = operation.segments.map((segment) =>
    segment.startsWith('{')
      ? pathValue(document, operation, segment.slice(1, -1), context)
      : fc.constant(segment),
  );
  return fc
    .tuple(
      fc.tuple(...parts),
      fc.constantFrom('as-is', 'as-is', 'as-is', 'as-is', 'slash', 'upper'),
    )
    .map(([segments, variant]) => {
      const path = segments.join('/');
      if (variant === 'slash') return `${path}/`;
      return variant === 'upper' ? path.toUpperCase() : path;
    });
}

function operationCase(document: OpenApiDocument, operation: Operation, context: FuzzContext) {
  return fc
    .record({
      method: fc.oneof(
        { weight: 19, arbitrary: fc.constant(operation.method) },
        { weight: 1, arbitrary: fc.constantFrom(...OTHER_METHODS) },
      ),
      path: pathFor(document, operation, context),
      query: fc.oneof({ weight: 3, arbitrary: queryString(document, operation) }, fc.constant('')),
      key: keyHeader,
      headers: extraHeaders,
      contentType,
      body: body(document, operation),
    })
    .map(({ method, path, query, key, headers, contentType: type, body: text }) => ({
      target: operation.name,
      method,
      path: query ? `${path}?${query}` : path,
      key,
      headers: text === undefined ? headers : { ...headers, 'content-type': type },
      body: text,
    }));
}

/** Requests to paths no operation has: traversal, encodings, near-misses of real routes. */
function unknownRouteCase(): fc.Arbitrary<FuzzCase> {
  const segment = fc.oneof(
    fc.constantFrom(
      'api',
      'v1',
      'keys',
      'tasks',
      '..',
      '.',
      '%2e%2e',
      '%2F',
      '',
      'docs',
      'openapi.json',
    ),
    oddString(12).map(encodePathValue),
  );
  return fc
    .record({
      method: fc.constantFrom(...OTHER_METHODS),
      segments: fc.array(segment, { maxLength: 6 }),
      key: keyHeader,
      headers: extraHeaders,
    })
    .map(({ method, segments, key, headers }) => ({
      target: 'unknown route',
      method,
      path: `/api/v1/${segments.join('/')}`,
      key,
      headers,
    }));
}

/** The whole request space: every operation equally, plus a share of unknown routes. */
export function fuzzCase(
  document: OpenApiDocument,
  operations: readonly Operation[],
  context: FuzzContext,
): fc.Arbitrary<FuzzCase> {
  return fc.oneof(
    ...operations.map((operation) => ({
      weight: 10,
      arbitrary: operationCase(document, operation, context),
    })),
    { weight: 10, arbitrary: unknownRouteCase() },
  );
}
