import type { NestExpressApplication } from '@nestjs/platform-express';
import type { Application, Request, Response } from 'express';

export const DOCS_PATH = 'docs';
export const OPENAPI_JSON_PATH = 'openapi.json';

/** What `GET /` answers: where the documentation is, for whoever opens the bare address. */
export const DOCS_POINTER = {
  name: 'Data Universe Validator API',
  docs: `/${DOCS_PATH}`,
  openapi: `/${OPENAPI_JSON_PATH}`,
} as const;

/**
 * `GET /` answers a small JSON naming the Swagger UI and the OpenAPI document, where it used to
 * answer a bare 404. Public, like them, and like them not an operation of the document
 * (docs/decisions.md, "The bare address"). Served by Express, as the Swagger UI is, so no key
 * or budget applies; the middleware in front (request id, log line, security headers) does.
 */
export function serveDocsPointer(app: NestExpressApplication): void {
  const express: Application = app.getHttpAdapter().getInstance();
  express.get('/', (_request: Request, response: Response) => {
    response.json(DOCS_POINTER);
  });
}
