import type { Request, Response } from 'express';
import { securityHeaders } from './security-headers';

/** What every answer carries, JSON included (OWASP's REST Security Cheat Sheet). */
const API_HEADERS = {
  'Cross-Origin-Resource-Policy': 'same-origin',
  'Strict-Transport-Security': 'max-age=31536000; includeSubDomains',
  'X-Content-Type-Options': 'nosniff',
  'X-Frame-Options': 'SAMEORIGIN',
};

/** helmet's headers that act on a page a browser shows: on the documentation's pages only. */
const PAGE_HEADERS = {
  'Cross-Origin-Opener-Policy': 'same-origin',
  'Origin-Agent-Cluster': '?1',
  'Referrer-Policy': 'no-referrer',
  'X-DNS-Prefetch-Control': 'off',
  'X-Download-Options': 'noopen',
  'X-Permitted-Cross-Domain-Policies': 'none',
  'X-XSS-Protection': '0',
  'Content-Security-Policy':
    "default-src 'self';script-src 'self';style-src 'self' 'unsafe-inline';img-src 'self' data:;" +
    "connect-src 'self';object-src 'none';base-uri 'self';form-action 'self';frame-ancestors 'self'",
};

/** The headers the middleware leaves on a response to `url`, after X-Powered-By was set. */
function headersFor(url: string, middleware = securityHeaders('/docs')) {
  const headers = new Map<string, unknown>([['X-Powered-By', 'Express']]);
  const response = {
    setHeader: (name: string, value: unknown) => headers.set(name, value),
    removeHeader: (name: string) => headers.delete(name),
  } as unknown as Response;
  let passedOn = false;
  middleware({ url } as Request, response, () => {
    passedOn = true;
  });
  expect(passedOn).toBe(true);
  return Object.fromEntries(headers);
}

describe(securityHeaders.name, () => {
  // The app routes case-sensitively (bootstrap.ts): /DOCS/ is no page, but a 404 of the API.
  it.each([
    '/api/v1/health',
    '/',
    '/openapi.json',
    '/docsx',
    '/api/v1/docs',
    '/x?/docs',
    '/DOCS/',
    '/Docs?x=1',
  ])('sends the API headers only on %s, and removes X-Powered-By', (url) => {
    expect(headersFor(url)).toEqual(API_HEADERS);
  });

  it.each(['/docs', '/docs/', '/docs?x=1', '/docs/swagger-ui.css'])(
    "sends helmet's full set on the documentation's %s",
    (url) => {
      expect(headersFor(url)).toEqual({ ...API_HEADERS, ...PAGE_HEADERS });
    },
  );

  it('treats no path as a page when not given one', () => {
    expect(headersFor('/docs', securityHeaders())).toEqual(API_HEADERS);
  });
});
