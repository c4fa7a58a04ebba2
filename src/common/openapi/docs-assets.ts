import { dirname } from 'node:path';
import type { NextFunction, Request, Response } from 'express';
import { sendError } from '../errors/error-body';
import { ERROR_DETAILS } from '../errors/error-details';
import { pathUnder } from '../http/path-under';

/**
 * What the Swagger UI page under the docs path loads, each path exactly as it follows the docs
 * path: the page itself (with or without its slash), Nest's `swagger-ui-init.js`, the files of
 * swagger-ui-dist its HTML names (@nestjs/swagger's swagger-ui/constants.js), and the files
 * those name in turn.
 */
const DOCS_FILES = new Set([
  '',
  '/',
  '/swagger-ui-init.js',
  '/swagger-ui.css',
  '/swagger-ui-bundle.js',
  '/swagger-ui-standalone-preset.js',
  '/favicon-16x16.png',
  '/favicon-32x32.png',
  // The licence notices of what the two bundles include, which their first lines point to
  // (swagger-ui's own licence and NOTICE are sent below: SWAGGER_UI_NOTICES).
  '/swagger-ui-bundle.js.LICENSE.txt',
  '/swagger-ui-standalone-preset.js.LICENSE.txt',
  // The source map the stylesheet's last line names: a browser's developer tools load it, and a
  // 404 there is an error in their console. The bundles name none, and theirs stay unserved.
  '/swagger-ui.css.map',
]);

/**
 * Nest serves the whole swagger-ui-dist folder under the docs path, which also holds its
 * package.json (the exact version), README, source maps, build logs, and a stock `index.html`
 * whose initializer loads the Petstore demo from petstore.swagger.io. Anything there but the
 * page's own files is the 404 every unknown path gets. The file's path is compared exactly as
 * sent (a percent-encoded, dotted or doubled-slash one is refused, not decoded); the docs path
 * as the app routes it, case-sensitively.
 */
export function onlyDocsFiles(docsPath: string) {
  return (request: Request, response: Response, next: NextFunction): void => {
    if (request.method !== 'GET' && request.method !== 'HEAD') return next();
    const rest = pathUnder(request.url, docsPath);
    if (rest === undefined) return next();
    if (rest === '/' && request.url.includes('?'))
      return redirectToPageWithoutSlash(request, response);
    // Exactly: `/docs//` is no page of Nest's, and the static folder would serve its stock one.
    if (DOCS_FILES.has(rest)) return next();
    const notice = SWAGGER_UI_NOTICES.get(rest);
    if (notice) return sendNotice(notice, response);
    sendError(request, response, 404, { detail: ERROR_DETAILS.notFound });
  };
}

/**
 * swagger-ui's Apache-2.0 licence and NOTICE, which go with the code the page hands out (§4),
 * sent as text: the static folder would send them as octet streams (no extension), and
 * @nestjs/swagger routes `LICENSE` to a 404 of its own, ahead of the folder.
 */
const SWAGGER_UI_NOTICES = new Map([
  ['/LICENSE', 'LICENSE'],
  ['/NOTICE', 'NOTICE'],
]);

function sendNotice(name: string, response: Response): void {
  // Without a callback: Express then drops a client's early hang-up (ECONNABORTED) and write
  // errors, which a callback would have sent on as errors, each an ERROR line with a stack. The
  // folder as a root: only the name is checked for dot-segments, not the install's path.
  response.sendFile(name, {
    root: swaggerUiFolder(),
    headers: { 'Content-Type': 'text/plain; charset=utf-8' },
  });
}

/** The swagger-ui-dist @nestjs/swagger serves (its dependency, not ours): the same copy. */
function swaggerUiFolder(): string {
  const nestSwagger = require.resolve('@nestjs/swagger');
  return dirname(require.resolve('swagger-ui-dist/package.json', { paths: [nestSwagger] }));
}

/**
 * `/docs/?x=1` is sent on to `/docs?x=1`. @nestjs/swagger picks the page's base for its files by
 * whether the URL ends in a slash, query and all, so it gives this one the base of `/docs`, and
 * the browser, resolving it against `/docs/`, loads every file from `/docs/docs/` (404: a blank
 * page). The address without the slash gets the page right and keeps the query. The Location is
 * relative, so it holds behind a proxy that serves the gateway under a prefix of its own.
 */
function redirectToPageWithoutSlash(request: Request, response: Response): void {
  const query = request.url.indexOf('?');
  // The path ends in its slash: the segment before it is the docs path's last, as sent.
  const segment = request.url.slice(request.url.lastIndexOf('/', query - 2) + 1, query - 1);
  response.redirect(301, `../${segment}${request.url.slice(query)}`);
}
