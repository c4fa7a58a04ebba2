import { createKey } from '../support/fixtures';
import { startTestApp, TestApp } from '../support/test-app';

/** What every answer carries, JSON included (no CSP on JSON, no COEP anywhere). */
const API_HEADERS = {
  'cross-origin-resource-policy': 'same-origin',
  'strict-transport-security': 'max-age=31536000; includeSubDomains',
  'x-content-type-options': 'nosniff',
  'x-frame-options': 'SAMEORIGIN',
};

/** helmet's headers that act on a page a browser shows: on the documentation's pages only. */
const PAGE_HEADERS = {
  'cross-origin-opener-policy': 'same-origin',
  'origin-agent-cluster': '?1',
  'referrer-policy': 'no-referrer',
  'x-dns-prefetch-control': 'off',
  'x-download-options': 'noopen',
  'x-permitted-cross-domain-policies': 'none',
  'x-xss-protection': '0',
  // Its own scripts only, this origin only: where the master key is typed.
  'content-security-policy':
    "default-src 'self';script-src 'self';style-src 'self' 'unsafe-inline';img-src 'self' data:;" +
    "connect-src 'self';object-src 'none';base-uri 'self';form-action 'self';frame-ancestors 'self'",
};

describe('Security headers', () => {
  let app: TestApp;

  beforeAll(async () => {
    app = await startTestApp();
  });
  afterAll(() => app.close());

  const expectNoPoweredByOrCsp = (headers: Record<string, string>) => {
    expect(headers['x-powered-by']).toBeUndefined();
    expect(headers['content-security-policy']).toBeUndefined();
  };

  it('are on every JSON answer (200, 401, 404, the document), without the page headers', async () => {
    const { key } = await createKey(app);
    const answers = [
      await app.http.get('/api/v1/health').set('X-API-Key', key).expect(200),
      await app.http.get('/api/v1/health').expect(401),
      await app.http.get('/api/v1/no-such-route').set('X-API-Key', key).expect(404),
      await app.http.get('/openapi.json').expect(200),
      await app.http.get('/').expect(200),
      // Only the documentation's own path is a page, not one that begins like it.
      await app.http.get('/docsx').set('X-API-Key', key).expect(404),
      // The app routes case-sensitively, as Starlette: /DOCS/ is no page, but a 404.
      await app.http.get('/DOCS/').expect(404),
    ];
    for (const answer of answers) {
      expect(answer.headers).toMatchObject(API_HEADERS);
      for (const name of Object.keys(PAGE_HEADERS)) expect(answer.headers[name]).toBeUndefined();
      expectNoPoweredByOrCsp(answer.headers);
    }
  });

  it("are helmet's full set on the documentation's pages and assets", async () => {
    const answers = [
      await app.http.get('/docs').redirects(0),
      await app.http.get('/docs/').expect(200),
      await app.http.get('/docs/swagger-ui.css').expect(200),
    ];
    for (const answer of answers) {
      expect(answer.headers).toMatchObject({ ...API_HEADERS, ...PAGE_HEADERS });
      expect(answer.headers['x-powered-by']).toBeUndefined();
    }
  });
});
