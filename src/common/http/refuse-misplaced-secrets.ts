import { Logger } from '@nestjs/common';
import type { NextFunction, Request, Response } from 'express';
import { sendError } from '../errors/error-body';
import { ERROR_DETAILS } from '../errors/error-details';
import { redactUrl } from '../logging/redact-url';
import { SecretScanner } from '../security/secret-scanner';

/** The one place a key is expected outside the headers: the key to deactivate. */
const KEY_PATH = /^\/api\/v1\/keys\/[^/]+\/deactivate\/?$/i;

/**
 * Secrets belong in the X-API-Key or Authorization header. A request that carries one anywhere
 * else (the path, the query string, the JSON body), in any encoding, is refused with a 400
 * before it is routed, authenticated or stored: nothing of it is kept (a secret as a task id or
 * a label would otherwise be stored and shown to every key), and the client learns of its
 * mistake. Installed after the body parser, so the body is scanned as parsed.
 */
export function refuseMisplacedSecrets(scanner: SecretScanner) {
  // Refused before the request logger sees the request: said here, with the URL redacted.
  const logger = new Logger('Security');
  return (request: Request, response: Response, next: NextFunction): void => {
    const queryAt = request.url.indexOf('?');
    const path = queryAt === -1 ? request.url : request.url.slice(0, queryAt);
    const query = queryAt === -1 ? '' : request.url.slice(queryAt + 1);
    const body: unknown = request.body;
    const misplaced =
      (!KEY_PATH.test(path) && scanner.contains(path)) ||
      scanner.contains(query) ||
      (body !== undefined && scanner.contains(JSON.stringify(body)));
    if (!misplaced) return next();
    logger.warn(
      `${request.method} ${redactUrl(request.url, scanner)} 400: refused, it carries a secret ` +
        'outside the X-API-Key and Authorization headers',
    );
    sendError(request, response, 400, { detail: ERROR_DETAILS.misplacedSecret });
  };
}
