import { exchange, parse } from '../support/raw-http';
import { startTestApp, TestApp } from '../support/test-app';

// With CORS on, a browser's preflight is answered for what a path really has, and every other
// OPTIONS request is answered as without CORS (docs/decisions.md, "CORS preflights").

const ORIGIN = 'https://dashboard.example';

describe('CORS preflights', () => {
  let app: TestApp;

  beforeAll(async () => {
    app = await startTestApp({ CORS_ORIGINS: ORIGIN });
  });
  afterAll(() => app.close());

  const preflight = (path: string, method: string, origin = ORIGIN) =>
    app.http
      .options(path)
      .set('Origin', origin)
      .set('Access-Control-Request-Method', method)
      .set('Access-Control-Request-Headers', 'content-type,x-api-key');

  const expectNoCors = (headers: Record<string, string>) => {
    expect(headers['access-control-allow-origin']).toBeUndefined();
    expect(headers['access-control-allow-methods']).toBeUndefined();
  };

  it('answers an OPTIONS request that is no preflight as without CORS: 404, or 405 with Allow', async () => {
    // A browser's preflight carries both Origin and Access-Control-Request-Method.
    for (const request of [
      () => app.http.options('/api/v1/nonexistent'),
      () => app.http.options('/api/v1/nonexistent').set('Origin', ORIGIN),
    ]) {
      const unknown = await request().expect(404);
      expect(unknown.body).toEqual({ detail: 'Not Found', request_id: expect.any(String) });
      expectNoCors(unknown.headers);
    }
    for (const request of [
      () => app.http.options('/api/v1/health'),
      () => app.http.options('/api/v1/health').set('Access-Control-Request-Method', 'GET'),
    ]) {
      const known = await request().expect(405);
      expect(known.headers.allow).toBe('GET, HEAD');
      expect(known.body).toEqual({ detail: 'Method Not Allowed', request_id: expect.any(String) });
      expectNoCors(known.headers);
    }
  });

  it("answers a preflight from an allowed origin with the path's own methods and the API's request headers", async () => {
    const health = await preflight('/api/v1/health', 'GET').expect(204);
    expect(health.headers).toMatchObject({
      'access-control-allow-origin': ORIGIN,
      'access-control-allow-methods': 'GET,HEAD',
      'content-length': '0',
    });
    expect(health.headers.vary).toMatch(/\bOrigin\b/);
    const allowedHeaders = String(health.headers['access-control-allow-headers']).split(',');
    for (const name of ['X-API-Key', 'Content-Type', 'If-None-Match'])
      expect(allowedHeaders).toContain(name);

    // Paths with a parameter (one with a trailing slash), and paths with two operations.
    const recompile = await preflight('/api/v1/tasks/t1/recompile/', 'POST').expect(204);
    expect(recompile.headers['access-control-allow-methods']).toBe('POST');
    const key = await preflight('/api/v1/keys/3f1c', 'PATCH').expect(204);
    expect(key.headers['access-control-allow-methods']).toBe('GET,HEAD,PATCH');
    const keys = await preflight('/api/v1/keys', 'POST').expect(204);
    expect(keys.headers['access-control-allow-methods']).toBe('GET,HEAD,POST');
  });

  it('lets a refused preflight go on to 404 or 405, without CORS headers', async () => {
    // A path no operation has.
    const unknown = await preflight('/api/v1/nonexistent', 'GET').expect(404);
    expectNoCors(unknown.headers);
    // An origin not listed, and a method the path does not have.
    for (const refused of [
      preflight('/api/v1/health', 'GET', 'https://elsewhere.example'),
      preflight('/api/v1/health', 'DELETE'),
    ]) {
      const answer = await refused.expect(405);
      expect(answer.headers.allow).toBe('GET, HEAD');
      expect(answer.body).toEqual({ detail: 'Method Not Allowed', request_id: expect.any(String) });
      expectNoCors(answer.headers);
    }
  });

  // Node's parser refuses a chunked body the app was reading, and its 400 is written on the socket:
  // it had no CORS headers, so a browser's script could not read why (a hostile-client review's
  // finding). The answers the app writes itself (413, 415) had them already.
  it('gives a request whose body the parser refused the CORS headers of its origin', async () => {
    const port = Number(new URL(app.url).port);
    const send = (rest: string) =>
      exchange(port, (socket) =>
        socket.write(
          `PUT /api/v1/keys/3f1c HTTP/1.1\r\nHost: x\r\nOrigin: ${ORIGIN}\r\n` +
            `Content-Type: application/json\r\n${rest}`,
        ),
      ).then(parse);
    const badChunk = await send('Transfer-Encoding: chunked\r\n\r\nzz\r\nabc\r\n');
    const tooLarge = await send('Content-Length: 2000000\r\n\r\n');
    expect([badChunk.status, tooLarge.status]).toEqual([400, 413]);
    for (const answer of [badChunk, tooLarge]) {
      expect(answer.headers['access-control-allow-origin']).toBe(ORIGIN);
      expect(answer.headers.vary).toMatch(/\bOrigin\b/);
      expect(answer.headers['access-control-expose-headers']).toMatch(/\bX-Request-Id\b/);
    }
  });

  it('allows every request header the document names, the request id and Content-Type', async () => {
    const document = (await app.http.get('/openapi.json').expect(200)).body as OpenApiRequests;
    const named = new Set(['Content-Type', 'X-Request-Id']);
    for (const scheme of Object.values(document.components.securitySchemes))
      named.add(scheme.type === 'apiKey' ? scheme.name! : 'Authorization');
    for (const operations of Object.values(document.paths))
      for (const operation of Object.values(operations))
        for (const parameter of operation.parameters ?? [])
          if (parameter.in === 'header') named.add(parameter.name);
    const answer = await preflight('/api/v1/tasks/3f1c/dataset', 'GET').expect(204);
    const allowed = String(answer.headers['access-control-allow-headers']).split(',');
    expect([...allowed].sort()).toEqual([...named].sort());
  });
});

interface OpenApiRequests {
  paths: Record<string, Record<string, { parameters?: { in: string; name: string }[] }>>;
  components: { securitySchemes: Record<string, { type: string; name?: string }> };
}
