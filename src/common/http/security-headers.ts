import type { IncomingMessage, OutgoingHttpHeader, ServerResponse } from 'node:http';
import type { NextFunction, Request, Response } from 'express';
import helmet, { HelmetOptions } from 'helmet';
import { pathUnder } from './path-under';

/**
 * The headers every answer carries, JSON included (OWASP's REST Security Cheat Sheet): HSTS,
 * `nosniff`, `X-Frame-Options` and `Cross-Origin-Resource-Policy`. No CSP on JSON (a browser
 * renders none of it) and no COEP anywhere.
 */
const API_HEADER_OPTIONS: HelmetOptions = {
  contentSecurityPolicy: false,
  crossOriginEmbedderPolicy: false,
  // The rest act on a page a browser shows (its opener, referrer, prefetches, downloads, legacy
  // XSS filter, Flash policies): sent on the documentation's pages, not on JSON.
  crossOriginOpenerPolicy: false,
  originAgentCluster: false,
  referrerPolicy: false,
  xDnsPrefetchControl: false,
  xDownloadOptions: false,
  xPermittedCrossDomainPolicies: false,
  xXssProtection: false,
};

/**
 * The Swagger UI's page may run only its own scripts and talk only to this origin: the page where
 * the master key is typed, showing text miners wrote. Its scripts, styles and the document are
 * all served from here (docs-assets.ts: no CDN); Swagger UI sets inline styles (`'unsafe-inline'`
 * for styles alone) and draws icons as data URLs. Tried in Chromium with every operation's "Try
 * it out": no violation (docs/decisions.md, "The OpenAPI document").
 */
const DOCS_CONTENT_SECURITY_POLICY = {
  defaultSrc: ["'self'"],
  scriptSrc: ["'self'"],
  styleSrc: ["'self'", "'unsafe-inline'"],
  imgSrc: ["'self'", 'data:'],
  connectSrc: ["'self'"],
  objectSrc: ["'none'"],
  baseUri: ["'self'"],
  formAction: ["'self'"],
  frameAncestors: ["'self'"],
};

/** helmet's full set, with the page's CSP (no COEP): for the Swagger UI's pages. */
const PAGE_HEADER_OPTIONS: HelmetOptions = {
  contentSecurityPolicy: { useDefaults: false, directives: DOCS_CONTENT_SECURITY_POLICY },
  crossOriginEmbedderPolicy: false,
};

interface HeaderList {
  set: [string, OutgoingHttpHeader][];
  removed: string[];
}

/**
 * Which headers helmet sets depends on its options only, never on the request, so they are read
 * once, at start-up, by running helmet against a response that records what it is told; helmet
 * itself runs a dozen middleware functions per request.
 */
function headersOf(options: HelmetOptions): HeaderList {
  const set: HeaderList['set'] = [];
  const removed: string[] = [];
  const recorder = {
    setHeader: (name: string, value: OutgoingHttpHeader) => void set.push([name, value]),
    removeHeader: (name: string) => void removed.push(name),
  };
  let ran = false;
  helmet(options)({} as IncomingMessage, recorder as unknown as ServerResponse, (error) => {
    ran = error === undefined;
  });
  if (!ran)
    throw new Error('helmet did not pass a bare response on: its headers cannot be precomputed');
  return { set, removed };
}

const API_HEADERS = headersOf(API_HEADER_OPTIONS);

/**
 * API_HEADER_OPTIONS' headers by name, for the answers written on the socket rather than by the
 * app (client-errors.ts): they carry what every other answer does.
 */
export const API_SECURITY_HEADERS: Readonly<Record<string, string>> = Object.fromEntries(
  API_HEADERS.set.map(([name, value]) => [
    name,
    Array.isArray(value) ? value.join(', ') : `${value}`,
  ]),
);

/**
 * helmet's security headers, set per request in one pass: API_HEADER_OPTIONS' on every answer,
 * PAGE_HEADER_OPTIONS' under `pagesPath` (the documentation, as routed: case-sensitively) when
 * given.
 */
export function securityHeaders(pagesPath?: string) {
  const pages = headersOf(PAGE_HEADER_OPTIONS);
  const isPage = (url: string): boolean =>
    pagesPath !== undefined && pathUnder(url, pagesPath) !== undefined;
  return (request: Request, response: Response, next: NextFunction): void => {
    const { set, removed } = isPage(request.url) ? pages : API_HEADERS;
    for (const [name, value] of set) response.setHeader(name, value);
    for (const name of removed) response.removeHeader(name);
    next();
  };
}
