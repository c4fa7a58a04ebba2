import { OpenApiDocument, readOperations, responseProblems } from './openapi';

const LIMIT_HEADER = { $ref: '#/components/headers/X-RateLimit-Limit' };

/** One operation whose 200 lists the shared rate-limit header and whose 413 does not. */
const DOCUMENT = {
  openapi: '3.0.0',
  info: { title: 'shared headers', version: '1' },
  paths: {
    '/things': {
      post: {
        responses: {
          '200': { description: 'ok', headers: { 'X-RateLimit-Limit': LIMIT_HEADER } },
          '413': { description: 'too large' },
        },
      },
    },
  },
  components: {
    headers: { 'X-RateLimit-Limit': { schema: { type: 'integer', format: 'int64' } } },
  },
} as unknown as OpenApiDocument;

describe(responseProblems.name, () => {
  const [operation] = readOperations(DOCUMENT);
  const answer = (status: number, headers: Record<string, string>) => ({
    method: 'POST',
    status,
    headers,
  });

  it('finds a shared header sent on a response that does not list it', () => {
    expect(responseProblems(operation, answer(413, { 'x-ratelimit-limit': '100' }))).toEqual([
      'header X-RateLimit-Limit was sent, but the document does not list it on 413',
    ]);
  });

  it('accepts the shared header where the response lists it, and its absence anywhere', () => {
    expect(responseProblems(operation, answer(200, { 'x-ratelimit-limit': '100' }))).toEqual([]);
    expect(responseProblems(operation, answer(413, {}))).toEqual([]);
  });
});
