import { createKey } from '../support/fixtures';
import { startTestApp, TestApp } from '../support/test-app';

/** helmet's headers with the app's options (no CSP, no COEP: the Swagger UI needs neither). */
const SECURITY_HEADERS = {
  'cross-origin-opener-policy': 'same-origin',
  'cross-origin-resource-policy': 'same-origin',
  'origin-agent-cluster': '?1',
  'referrer-policy': 'no-referrer',
  'strict-transport-security': 'max-age=31536000; includeSubDomains',
  'x-content-type-options': 'nosniff',
  'x-dns-prefetch-control': 'off',
  'x-download-options': 'noopen',
  'x-frame-options': 'SAMEORIGIN',
  'x-permitted-cross-domain-policies': 'none',
  'x-xss-protection': '0',
};

describe('Security headers', () => {
  let app: TestApp;

  beforeAll(async () => {
    app = await startTestApp();
  });
  afterAll(() => app.close());

  it('are on every answer (200, 401, 404, the docs), without X-Powered-By or a CSP', async () => {
    const { key } = await createKey(app);
    const answers = [
      await app.http.get('/api/v1/health').set('X-API-Key', key).expect(200),
      await app.http.get('/api/v1/health').expect(401),
      await app.http.get('/api/v1/no-such-route').set('X-API-Key', key).expect(404),
      await app.http.get('/docs/').expect(200),
    ];
    for (const answer of answers) {
      expect(answer.headers).toMatchObject(SECURITY_HEADERS);
      expect(answer.headers['x-powered-by']).toBeUndefined();
      expect(answer.headers['content-security-policy']).toBeUndefined();
    }
  });
});
