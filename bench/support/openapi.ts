import OpenAPIResponseValidator from 'openapi-response-validator';
import type { OpenAPIV3 } from 'openapi-types';
import { ERROR_DETAILS } from '../../src/common/errors/error-details';

export type OpenApiDocument = OpenAPIV3.Document;
export type Schema = OpenAPIV3.SchemaObject;

/** One operation of the live document, with what the generators and the response checks need. */
export interface Operation {
  /** `POST /api/v1/keys`: how reports name it. */
  name: string;
  method: string;
  template: string;
  /** The template's segments; `{name}` segments are path parameters. */
  segments: string[];
  parameters: OpenAPIV3.ParameterObject[];
  /** The JSON request body's schema, $refs left in place. */
  bodySchema?: Schema | OpenAPIV3.ReferenceObject;
  /** The documented responses by key: a status (`200`), a range (`4XX`) or `default`. */
  responses: Record<string, OpenAPIV3.ResponseObject>;
  /**
   * The headers the document defines once (`components.headers`) and lists on each response
   * that carries them: sent on a response that does not list them, they are a problem.
   */
  sharedHeaders: readonly string[];
  /** Schema validators for bodies and headers, compiled on first use. */
  validators: ResponseValidators;
}

/** An answer as the checks see it, whichever client received it. */
export interface Answer {
  /** The request's method: a HEAD answer has no body to check. */
  method: string;
  status: number;
  /** Response headers, names in lower case. */
  headers: Record<string, string | string[] | undefined>;
  /** The parsed body when the answer is JSON (undefined when not JSON or not read). */
  body?: unknown;
}

const METHODS = ['get', 'post', 'put', 'patch', 'delete'] as const;

/** Every operation of `/openapi.json`, each with response validators over its components. */
export function readOperations(document: OpenApiDocument): Operation[] {
  const components = closeObjects(toJsonSchemaBounds(document.components ?? {}));
  const sharedHeaders = Object.keys(document.components?.headers ?? {});
  const operations: Operation[] = [];
  for (const [template, item] of Object.entries(document.paths)) {
    for (const method of METHODS) {
      const operation = item?.[method];
      if (!operation) continue;
      const responses = operation.responses as Record<string, OpenAPIV3.ResponseObject>;
      const body = operation.requestBody as OpenAPIV3.RequestBodyObject | undefined;
      operations.push({
        name: `${method.toUpperCase()} ${template}`,
        method: method.toUpperCase(),
        template,
        segments: template.split('/'),
        parameters: (operation.parameters ?? []) as OpenAPIV3.ParameterObject[],
        bodySchema: body?.content['application/json']?.schema,
        responses,
        sharedHeaders,
        validators: new ResponseValidators(responses, components),
      });
    }
  }
  return operations;
}

/**
 * The operation Express would route `method pathname` to: routing is case-insensitive and
 * tolerates one trailing slash (Express defaults); a parameter takes one non-empty segment.
 * HEAD is answered by the GET route.
 */
export function matchOperation(
  operations: readonly Operation[],
  method: string,
  pathname: string,
): Operation | undefined {
  const wanted = method === 'HEAD' ? 'GET' : method;
  const segments = pathSegments(pathname);
  return operations.find(
    (operation) => operation.method === wanted && pathMatches(operation, segments),
  );
}

/** The methods the document has for a path, whichever was asked (HEAD wherever GET is). */
export function allowedMethods(operations: readonly Operation[], pathname: string): string[] {
  const segments = pathSegments(pathname);
  const methods = operations
    .filter((operation) => pathMatches(operation, segments))
    .flatMap(({ method }) => (method === 'GET' ? ['GET', 'HEAD'] : [method]));
  return [...new Set(methods)];
}

function pathSegments(pathname: string): string[] {
  return pathname.replace(/(.)\/$/, '$1').split('/');
}

// A literal segment wins over a parameter (`/tasks/x` is not `/tasks/{id}/dataset`).
function pathMatches(operation: Operation, segments: string[]): boolean {
  return (
    operation.segments.length === segments.length &&
    operation.segments.every((part, index) =>
      part.startsWith('{')
        ? segments[index] !== ''
        : part.toLowerCase() === segments[index].toLowerCase(),
    )
  );
}

/** Follows a local `#/components/schemas/X` reference. */
export function resolveSchema(
  document: OpenApiDocument,
  schema: Schema | OpenAPIV3.ReferenceObject,
): Schema {
  if (!('$ref' in schema)) return schema;
  const name = schema.$ref.replace('#/components/schemas/', '');
  const target = document.components?.schemas?.[name];
  if (!target) throw new Error(`unresolved $ref ${schema.$ref}`);
  return resolveSchema(document, target);
}

/**
 * What in `answer` the operation's documented responses do not describe: an undocumented
 * status, a Content-Type other than the declared one, a JSON body off its schema, a required
 * header missing, a documented header off its schema, or one of the document's shared headers
 * (`components.headers`) sent where the response does not list it. Empty when the answer is
 * described.
 */
export function responseProblems(operation: Operation, answer: Answer): string[] {
  const key = responseKey(operation.responses, answer.status);
  if (key === undefined) {
    const documented = Object.keys(operation.responses).join(', ');
    return [`status ${answer.status} is not documented (documented: ${documented})`];
  }
  const declared = operation.responses[key];
  const problems = headerProblems(operation, key, answer);
  const hasBody = answer.method !== 'HEAD' && answer.status !== 204 && answer.status !== 304;
  if (!hasBody) return problems;
  const declaredTypes = Object.keys(declared.content ?? {});
  const sent = headerText(answer.headers['content-type']);
  if (declaredTypes.length === 0) {
    if (sent) problems.push(`Content-Type ${sent}, but the document declares no body for ${key}`);
    return problems;
  }
  const mediaType = declaredTypes.find((type) => sent && sameMediaType(sent, type));
  if (!mediaType) {
    problems.push(
      `Content-Type ${sent ?? '(none)'}; the document declares ${declaredTypes.join(' or ')}`,
    );
    return problems;
  }
  if (isJson(mediaType) && declared.content![mediaType].schema && answer.body !== undefined) {
    // The validator fills in schema defaults: it must not change the caller's body.
    const invalid = operation.validators
      .body()
      ?.validateResponse(key, structuredClone(answer.body));
    if (invalid)
      problems.push(
        `body does not match the schema of ${key} ${mediaType}: ${schemaErrors(invalid)}`,
      );
  }
  return problems;
}

/** Served, but not API operations: answers here are not checked, for the reason given. */
const OUTSIDE_THE_DOCUMENT: readonly { path: RegExp; why: string }[] = [
  { path: /^\/openapi\.json$/, why: 'the document itself' },
  { path: /^\/docs(\/.*)?$/, why: 'the Swagger UI page and its assets (HTML, JS, CSS)' },
  { path: /^\/$/, why: 'the pointer to the two above, for whoever opens the bare address' },
];

/** True for a path the service serves outside the document (OUTSIDE_THE_DOCUMENT). */
export function isOutsideTheDocument(pathname: string): boolean {
  return OUTSIDE_THE_DOCUMENT.some(({ path }) => path.test(pathname));
}

const BODY_METHODS = new Set(['POST', 'PUT', 'PATCH']);
/** What the body reader answers for a body it cannot take: too large, encoding, bad JSON. */
const BODY_STATUSES = new Set([413, 415, 422]);

/** What Node's HTTP parser answers before any route: timeouts and oversized headers. */
const PARSER_STATUSES = new Set([408, 431]);

/**
 * What is wrong with an answer to a request no operation has: it must be 404 for a path no
 * operation has, and 405 with `Allow` naming them (`allowed`) for a path whose operations
 * have other methods, unless it was refused before routing: by Node's HTTP parser (400 for a
 * request it cannot read, 408, 431), a body the reader cannot take (413, 415, 422), or a
 * secret outside the authentication headers (400, README "Secrets").
 */
export function unroutedProblems(answer: Answer, allowed: readonly string[]): string[] {
  const { method, status, body } = answer;
  if (PARSER_STATUSES.has(status)) return [];
  if (BODY_METHODS.has(method) && BODY_STATUSES.has(status)) return [];
  const detail = (body as { detail?: unknown } | undefined)?.detail;
  const refusals: unknown[] = [ERROR_DETAILS.misplacedSecret, ERROR_DETAILS.malformedRequest];
  // A HEAD answer has no body to tell the two 400s apart; both are refusals before routing.
  if (status === 400 && (method === 'HEAD' || refusals.includes(detail))) return [];
  if (allowed.length === 0)
    return status === 404 ? [] : [`status ${status} for a path no operation has (want 404)`];
  const want = [...allowed].sort().join(', ');
  if (status !== 405) return [`status ${status} for ${method} on a path with ${want} (want 405)`];
  const allow = String(answer.headers.allow ?? '(none)');
  const sent = allow
    .split(/\s*,\s*/)
    .sort()
    .join(', ');
  return sent === want ? [] : [`405 with Allow: ${allow} (want ${want})`];
}

/** The documented response for a status: exact, then its range (`4XX`), then `default`. */
function responseKey(
  responses: Record<string, OpenAPIV3.ResponseObject>,
  status: number,
): string | undefined {
  return [String(status), `${String(status)[0]}XX`, 'default'].find((key) => key in responses);
}

function headerProblems(operation: Operation, key: string, answer: Answer): string[] {
  const documented = operation.responses[key].headers ?? {};
  const problems: string[] = [];
  for (const [name, header] of Object.entries(documented)) {
    const present = answer.headers[name.toLowerCase()] !== undefined;
    if (!present && (header as OpenAPIV3.HeaderObject).required)
      problems.push(`required header ${name} is missing`);
  }
  const listed = new Set(Object.keys(documented).map((name) => name.toLowerCase()));
  for (const name of operation.sharedHeaders) {
    const lower = name.toLowerCase();
    if (answer.headers[lower] !== undefined && !listed.has(lower))
      problems.push(`header ${name} was sent, but the document does not list it on ${key}`);
  }
  const validator = operation.validators.headers(key);
  if (!validator) return problems;
  const invalid = validator.validateResponse(key, headerValues(documented, answer.headers));
  if (invalid) problems.push(`a header does not match its schema: ${schemaErrors(invalid)}`);
  return problems;
}

/** The documented headers that were sent, as the values their schemas describe. */
function headerValues(
  documented: Record<string, OpenAPIV3.HeaderObject | OpenAPIV3.ReferenceObject>,
  sent: Answer['headers'],
): Record<string, unknown> {
  const values: Record<string, unknown> = {};
  for (const [name, header] of Object.entries(documented)) {
    const text = headerText(sent[name.toLowerCase()]);
    if (text === undefined) continue;
    const type = ((header as OpenAPIV3.HeaderObject).schema as Schema | undefined)?.type;
    const numeric = (type === 'integer' || type === 'number') && /^-?\d+(\.\d+)?$/.test(text);
    values[name] = numeric ? Number(text) : type === 'boolean' ? text === 'true' : text;
  }
  return values;
}

/**
 * The ajv validators (through openapi-response-validator) of one operation: one over the JSON
 * body of every response, one per response over its documented headers.
 */
export class ResponseValidators {
  private bodyValidator?: OpenAPIResponseValidator | null;
  private readonly headerValidators = new Map<string, OpenAPIResponseValidator | null>();

  constructor(
    private readonly responses: Record<string, OpenAPIV3.ResponseObject>,
    private readonly components: OpenAPIV3.ComponentsObject,
  ) {}

  body(): OpenAPIResponseValidator | undefined {
    if (this.bodyValidator === undefined) {
      const schemas: Record<string, { schema: Schema }> = {};
      for (const [key, response] of Object.entries(this.responses)) {
        const json = Object.keys(response.content ?? {}).find(isJson);
        const schema = json && response.content![json].schema;
        if (schema) schemas[key] = { schema: closeObjects(toJsonSchemaBounds(schema)) as Schema };
      }
      this.bodyValidator = this.compile(schemas);
    }
    return this.bodyValidator ?? undefined;
  }

  headers(key: string): OpenAPIResponseValidator | undefined {
    if (!this.headerValidators.has(key)) {
      const documented = Object.entries(this.responses[key].headers ?? {});
      const properties = Object.fromEntries(
        documented.map(([name, header]) => [name, (header as OpenAPIV3.HeaderObject).schema ?? {}]),
      );
      const schema = { type: 'object', properties } as Schema;
      this.headerValidators.set(
        key,
        documented.length > 0
          ? this.compile({ [key]: { schema: toJsonSchemaBounds(schema) } })
          : null,
      );
    }
    return this.headerValidators.get(key) ?? undefined;
  }

  private compile(schemas: Record<string, { schema: Schema }>): OpenAPIResponseValidator | null {
    if (Object.keys(schemas).length === 0) return null;
    return new OpenAPIResponseValidator({
      responses: schemas,
      components: this.components,
      customFormats: FORMATS,
    });
  }
}

/**
 * A check of values against `schemas` (by name), read as the answer checks read them: $refs into
 * the document's components, formats checked, objects closed. Compiled once for all of them.
 */
export function schemaCheck(
  document: OpenApiDocument,
  schemas: Record<string, Schema | OpenAPIV3.ReferenceObject>,
): (name: string, value: unknown) => string[] {
  const validator = new OpenAPIResponseValidator({
    responses: Object.fromEntries(
      Object.entries(schemas).map(([name, schema]) => [
        name,
        { schema: closeObjects(toJsonSchemaBounds(schema)) as Schema },
      ]),
    ),
    components: closeObjects(toJsonSchemaBounds(document.components ?? {})),
    customFormats: FORMATS,
  });
  return (name, value) => {
    const invalid = validator.validateResponse(name, structuredClone(value));
    return invalid ? [schemaErrors(invalid)] : [];
  };
}

/** The string formats the document uses, checked (ajv alone ignores unknown formats). */
const FORMATS = {
  'date-time': (value: string) =>
    /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/i.test(value) &&
    !Number.isNaN(Date.parse(value)),
  date: (value: string) => /^\d{4}-\d{2}-\d{2}$/.test(value) && !Number.isNaN(Date.parse(value)),
  uuid: (value: string) =>
    /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(value),
};

function schemaErrors(invalid: { errors?: { path?: string; message: string }[] }): string {
  return (invalid.errors ?? [])
    .map((error) => `${error.path ? `${error.path}: ` : ''}${error.message}`)
    .join('; ');
}

function headerText(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value.join(', ') : value;
}

function isJson(mediaType: string): boolean {
  return /^application\/([\w.-]+\+)?json\b/i.test(mediaType);
}

/**
 * Same type/subtype, and every parameter the document names (`charset=utf-8`) sent with the
 * same value; the sender may add parameters (Express adds `charset=utf-8` to JSON).
 */
export function sameMediaType(sent: string, documented: string): boolean {
  const parse = (value: string) => {
    const [essence, ...parameters] = value.split(';').map((part) => part.trim().toLowerCase());
    return { essence, parameters: parameters.filter(Boolean) };
  };
  const actual = parse(sent);
  const wanted = parse(documented);
  return (
    actual.essence === wanted.essence &&
    wanted.parameters.every((parameter) => actual.parameters.includes(parameter))
  );
}

/**
 * OpenAPI 3.0 writes an exclusive bound as `minimum: 0, exclusiveMinimum: true` (draft 4);
 * the validator's ajv 8 wants `exclusiveMinimum: 0`. Returns a converted copy.
 */
function toJsonSchemaBounds<T>(value: T): T {
  if (Array.isArray(value)) return value.map(toJsonSchemaBounds) as T;
  if (typeof value !== 'object' || value === null) return value;
  const copy: Record<string, unknown> = {};
  for (const [key, item] of Object.entries(value)) copy[key] = toJsonSchemaBounds(item);
  for (const [flag, bound] of [
    ['exclusiveMinimum', 'minimum'],
    ['exclusiveMaximum', 'maximum'],
  ]) {
    if (copy[flag] === true) {
      copy[flag] = copy[bound];
      delete copy[bound];
    } else if (copy[flag] === false) delete copy[flag];
  }
  return copy as T;
}

/**
 * A copy in which every object schema with `properties` and no `additionalProperties` of its
 * own forbids other members: an answer carrying a field the document does not name is a drift
 * the check must catch. The served document stays open (clients may expect new fields); only
 * the check is closed. Sound here because no schema merges partial objects with `allOf`.
 */
function closeObjects<T>(value: T): T {
  if (Array.isArray(value)) return value.map(closeObjects) as T;
  if (typeof value !== 'object' || value === null) return value;
  const copy: Record<string, unknown> = {};
  for (const [key, item] of Object.entries(value)) copy[key] = closeObjects(item);
  if ('properties' in copy && !('additionalProperties' in copy)) copy.additionalProperties = false;
  return copy as T;
}
