import type { OpenAPIV3 } from 'openapi-types';
import { ERROR_DETAILS } from '../../src/common/errors/error-details';
import {
  closeObjects,
  isJson,
  ResponseValidators,
  schemaErrors,
  toJsonSchemaBounds,
} from './openapi-schemas';

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
   * The headers a response lists only where they are sent: the document's shared ones
   * (`components.headers`) and those this operation lists on any of its responses (a
   * download's `Cache-Control`). Sent on a response that does not list it, one is a problem.
   */
  listedHeaders: readonly string[];
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
      const ownHeaders = Object.values(responses).flatMap(({ headers }) =>
        Object.keys(headers ?? {}),
      );
      operations.push({
        name: `${method.toUpperCase()} ${template}`,
        method: method.toUpperCase(),
        template,
        segments: template.split('/'),
        parameters: (operation.parameters ?? []) as OpenAPIV3.ParameterObject[],
        bodySchema: body?.content['application/json']?.schema,
        responses,
        listedHeaders: [...new Set([...sharedHeaders, ...ownHeaders])],
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
      part.startsWith('{') ? segments[index] !== '' : part === segments[index],
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
 * header missing, a documented header off its schema, or a header the document lists elsewhere
 * (in `components.headers`, or on another response of the operation) sent where the response
 * does not list it. Empty when the answer is described.
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
  // Case-sensitively, as the app routes it (bootstrap.ts): `/DOCS` is an API 404, checked.
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
 * request it cannot read, 408, 431), a body the reader cannot take (413, 415, 422), or an
 * issued key outside the authentication headers (400, README "Secrets"). A CORS preflight is
 * answered before routing too, 204 with `Access-Control-Allow-Methods` naming exactly the
 * path's methods (docs/decisions.md, "CORS preflights").
 */
export function unroutedProblems(answer: Answer, allowed: readonly string[]): string[] {
  const { method, status, body } = answer;
  if (PARSER_STATUSES.has(status)) return [];
  if (method === 'OPTIONS' && answer.headers['access-control-allow-methods'] !== undefined)
    return preflightProblems(answer, allowed);
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

function preflightProblems(answer: Answer, allowed: readonly string[]): string[] {
  if (allowed.length === 0) return ['a preflight answered for a path no operation has (want 404)'];
  const offered = String(answer.headers['access-control-allow-methods']);
  const want = [...allowed].sort().join(',');
  const problems: string[] = [];
  if (answer.status !== 204) problems.push(`preflight answered ${answer.status} (want 204)`);
  if (answer.headers['access-control-allow-origin'] === undefined)
    problems.push('preflight without Access-Control-Allow-Origin');
  if (offered.split(',').sort().join(',') !== want)
    problems.push(`preflight offering ${offered} (want ${want})`);
  return problems;
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
  for (const name of operation.listedHeaders) {
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

function headerText(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value.join(', ') : value;
}
