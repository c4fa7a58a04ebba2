import { ERROR_DETAILS } from '../../src/common/errors/error-details';
import {
  allowedMethods,
  Answer,
  OpenApiDocument,
  readOperations,
  responseProblems,
  unroutedProblems,
} from './openapi';

/**
 * A one-operation document: an item with a nested part, a 404 error, documented headers (the
 * request id on both responses, the others on the 200 only, one of them shared, in
 * `components.headers`).
 */
const DOCUMENT: OpenApiDocument = {
  openapi: '3.0.0',
  info: { title: 'check', version: '1' },
  paths: {
    '/items/{id}': {
      get: {
        responses: {
          '200': {
            description: 'an item',
            headers: {
              'X-Request-Id': { required: true, schema: { type: 'string' } },
              'X-Count': { schema: { type: 'integer', minimum: 0 } },
              'X-RateLimit-Limit': { $ref: '#/components/headers/X-RateLimit-Limit' },
            },
            content: { 'application/json': { schema: { $ref: '#/components/schemas/Item' } } },
          },
          '404': {
            description: 'unknown id',
            headers: { 'X-Request-Id': { required: true, schema: { type: 'string' } } },
            content: {
              'application/json': {
                schema: {
                  type: 'object',
                  required: ['detail'],
                  properties: { detail: { type: 'string' } },
                },
              },
            },
          },
        },
      },
    },
  },
  components: {
    headers: { 'X-RateLimit-Limit': { schema: { type: 'integer', format: 'int64' } } },
    schemas: {
      Item: {
        type: 'object',
        required: ['id', 'part'],
        properties: {
          id: { type: 'integer', format: 'int32' },
          part: {
            type: 'object',
            properties: { name: { type: 'string' } },
          },
          labels: { type: 'object', additionalProperties: { type: 'number' } },
        },
      },
    },
  },
};

const [operation] = readOperations(DOCUMENT);

function answer(overrides: Partial<Answer>): Answer {
  return {
    method: 'GET',
    status: 200,
    headers: { 'content-type': 'application/json; charset=utf-8', 'x-request-id': 'r1' },
    body: { id: 1, part: { name: 'a' }, labels: { x: 1 } },
    ...overrides,
  };
}

describe('The check of an answer against the OpenAPI document', () => {
  it('passes an answer the document describes', () => {
    expect(responseProblems(operation, answer({}))).toEqual([]);
    expect(
      responseProblems(operation, answer({ status: 404, body: { detail: 'No item 7' } })),
    ).toEqual([]);
  });

  it('names an undocumented status', () => {
    expect(responseProblems(operation, answer({ status: 409 }))).toEqual([
      'status 409 is not documented (documented: 200, 404)',
    ]);
  });

  it('names a content type other than the declared one', () => {
    const headers = { 'content-type': 'text/plain', 'x-request-id': 'r1' };
    expect(responseProblems(operation, answer({ headers })).join()).toMatch(
      /Content-Type text\/plain; the document declares application\/json/,
    );
  });

  it('names a body off its schema', () => {
    expect(responseProblems(operation, answer({ body: { id: '1', part: {} } })).join()).toMatch(
      /body does not match the schema of 200/,
    );
  });

  it('names a field the document does not have, at any depth', () => {
    for (const body of [
      { id: 1, part: {}, extra: true },
      { id: 1, part: { name: 'a', extra: true } },
      { detail: 'No item 7', extra: true },
    ]) {
      const status = 'detail' in body ? 404 : 200;
      expect(responseProblems(operation, answer({ status, body })).join()).toMatch(
        /must NOT have additional properties/,
      );
    }
  });

  it('keeps a declared map open', () => {
    const body = { id: 1, part: {}, labels: { any: 1, other: 2 } };
    expect(responseProblems(operation, answer({ body }))).toEqual([]);
  });

  it('names a missing required header and a header off its schema', () => {
    expect(
      responseProblems(operation, answer({ headers: { 'content-type': 'application/json' } })),
    ).toEqual(['required header X-Request-Id is missing']);
    const headers = { 'content-type': 'application/json', 'x-request-id': 'r', 'x-count': '-1' };
    expect(responseProblems(operation, answer({ headers })).join()).toMatch(
      /a header does not match its schema/,
    );
  });

  it('names a shared header sent on a response that does not list it', () => {
    const headers = {
      'content-type': 'application/json',
      'x-request-id': 'r1',
      'x-ratelimit-limit': '100',
    };
    expect(responseProblems(operation, answer({ headers }))).toEqual([]);
    expect(
      responseProblems(operation, answer({ status: 404, headers, body: { detail: 'No item 7' } })),
    ).toEqual(['header X-RateLimit-Limit was sent, but the document does not list it on 404']);
  });

  // A dataset's 304 sent the 200's Cache-Control and Accept-Ranges, which the document listed
  // on the 200 alone, and the check passed it: they are no shared headers (a reviewer's finding).
  it("names a header of the operation's other responses sent on one that does not list it", () => {
    const headers = { 'content-type': 'application/json', 'x-request-id': 'r1', 'x-count': '3' };
    expect(responseProblems(operation, answer({ headers }))).toEqual([]);
    expect(
      responseProblems(operation, answer({ status: 404, headers, body: { detail: 'No item 7' } })),
    ).toEqual(['header X-Count was sent, but the document does not list it on 404']);
  });

  it('holds a path no operation has to 404, or to a refusal that comes before routing', () => {
    const unrouted = (method: string, status: number, body: unknown) =>
      unroutedProblems({ method, status, headers: {}, body }, []);
    expect(unrouted('GET', 404, { detail: 'Not Found' })).toEqual([]);
    for (const detail of [ERROR_DETAILS.misplacedSecret, ERROR_DETAILS.malformedRequest])
      expect(unrouted('GET', 400, { detail })).toEqual([]);
    expect(unrouted('HEAD', 400, undefined)).toEqual([]);
    expect(unrouted('GET', 431, { detail: ERROR_DETAILS.headersTooLarge })).toEqual([]);
    expect(unrouted('POST', 413, { detail: ERROR_DETAILS.bodyTooLarge })).toEqual([]);
    expect(unrouted('GET', 400, { detail: 'Something else' })).toEqual([
      'status 400 for a path no operation has (want 404)',
    ]);
    expect(unrouted('GET', 413, { detail: ERROR_DETAILS.bodyTooLarge })).toEqual([
      'status 413 for a path no operation has (want 404)',
    ]);
  });

  it('holds a known path asked with a method it lacks to 405, with Allow naming its methods', () => {
    const allowed = ['GET', 'HEAD', 'POST'];
    const answered = (status: number, allow?: string) =>
      unroutedProblems(
        { method: 'DELETE', status, headers: allow ? { allow } : {}, body: { detail: 'x' } },
        allowed,
      );
    expect(answered(405, 'POST, GET, HEAD')).toEqual([]);
    expect(answered(404)).toEqual([
      'status 404 for DELETE on a path with GET, HEAD, POST (want 405)',
    ]);
    expect(answered(405, 'GET')).toEqual(['405 with Allow: GET (want GET, HEAD, POST)']);
    expect(answered(405)).toEqual(['405 with Allow: (none) (want GET, HEAD, POST)']);
  });

  it("holds a CORS preflight to 204 offering exactly the path's methods", () => {
    const preflight = (
      status: number,
      methods: string,
      allowed: string[],
      origin = 'https://a.example',
    ) =>
      unroutedProblems(
        {
          method: 'OPTIONS',
          status,
          headers: {
            'access-control-allow-methods': methods,
            ...(origin ? { 'access-control-allow-origin': origin } : {}),
          },
        },
        allowed,
      );
    expect(preflight(204, 'GET,HEAD', ['HEAD', 'GET'])).toEqual([]);
    // The cors package's default list, whatever the path has.
    expect(preflight(204, 'GET,HEAD,PUT,PATCH,POST,DELETE', ['GET', 'HEAD'])).toEqual([
      'preflight offering GET,HEAD,PUT,PATCH,POST,DELETE (want GET,HEAD)',
    ]);
    expect(preflight(204, 'GET', [])).toEqual([
      'a preflight answered for a path no operation has (want 404)',
    ]);
    expect(preflight(200, 'PATCH', ['PATCH'], '')).toEqual([
      'preflight answered 200 (want 204)',
      'preflight without Access-Control-Allow-Origin',
    ]);
  });

  it('finds the methods a path has, HEAD with GET', () => {
    const operations = readOperations(DOCUMENT);
    expect(allowedMethods(operations, '/items/7/')).toEqual(['GET', 'HEAD']);
    // Case-sensitively, as the app routes (and Starlette): another case is no path of it.
    expect(allowedMethods(operations, '/ITEMS/7/')).toEqual([]);
    expect(allowedMethods(operations, '/items')).toEqual([]);
  });
});
