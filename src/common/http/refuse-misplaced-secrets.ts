import { Logger } from '@nestjs/common';
import type { NextFunction, Request, Response } from 'express';
import { sendError } from '../errors/error-body';
import { ERROR_DETAILS } from '../errors/error-details';
import { redactUrl } from '../logging/redact-url';
import { ThrottledWarning, WARNING_INTERVAL_MS } from '../logging/throttled-warning';
import { SecretScanner } from '../security/secret-scanner';
import { ISSUED_KEY_SCANNER } from '../security/secrets';

/** The one place a key is expected outside the headers: the key to deactivate. */
const KEY_PATH = /^\/api\/v1\/keys\/[^/]+\/deactivate\/?$/;

/** How the refusal is logged, after the method and the redacted URL. */
export const REFUSED_FOR_A_SECRET =
  '400: refused, it carries a secret outside the X-API-Key and Authorization headers';

/**
 * The refusals' warnings, each request named by its method and redacted URL: the first at once,
 * then one line per interval with how many more (ThrottledWarning). One each let a flood of
 * misplaced keys, which anyone can send, fill the log (an on-call audit's finding).
 */
export function refusalWarnings(intervalMs = WARNING_INTERVAL_MS): ThrottledWarning {
  return new ThrottledWarning(
    new Logger('Security'),
    {
      line: (request) => `${request} ${REFUSED_FOR_A_SECRET}`,
      summary: (count, seconds, last) =>
        `${count} more requests refused in ${seconds} s for a secret outside the X-API-Key and ` +
        `Authorization headers; the last: ${last}`,
    },
    intervalMs,
  );
}

/**
 * True when what `scanner` looks for is in the request outside the X-API-Key and Authorization
 * headers: in its path (but for the key to deactivate), its query string or its JSON body, in
 * any encoding.
 */
export function carriesSecret(url: string, body: unknown, scanner: SecretScanner): boolean {
  const queryAt = url.indexOf('?');
  const path = queryAt === -1 ? url : url.slice(0, queryAt);
  const query = queryAt === -1 ? '' : url.slice(queryAt + 1);
  return (
    (!KEY_PATH.test(path) && scanner.contains(path)) ||
    scanner.contains(query) ||
    (body !== undefined && scanner.contains(JSON.stringify(body)))
  );
}

/**
 * Secrets belong in the X-API-Key or Authorization header. A request that carries one anywhere
 * else is refused with a 400 before anything of it is stored (a secret as a task id or a label
 * would otherwise be shown to every key), and the client learns of its mistake. Two checks:
 * - this one, before routing and authentication: issued keys, known by their shape (`sk_live_`
 *   and 20 characters or more). A 400 for one tells the client nothing it did not send.
 * - MisplacedSecretGuard, once a key is admitted and its request charged to its budget: the
 *   secrets known in clear (the master key, the tokens, SUBTENSOR_URL's credentials). Looked
 *   for here, the 400 told anyone whether a guess at them was right, thousands of guesses a
 *   request, never counted towards the address's lockout (an audit's finding).
 * Installed after the body parser, so the body is scanned as parsed. `scanner` (every secret)
 * redacts the URL of the warning; `logIntervalMs` spaces the warnings (refusalWarnings).
 */
export function refuseMisplacedKeys(scanner: SecretScanner, logIntervalMs?: number) {
  // Refused before the request logger sees the request: said here, with the URL redacted.
  const warnings = refusalWarnings(logIntervalMs);
  return (request: Request, response: Response, next: NextFunction): void => {
    if (!carriesSecret(request.url, request.body, ISSUED_KEY_SCANNER)) return next();
    warnings.warn(`${request.method} ${redactUrl(request.url, scanner)}`);
    sendError(request, response, 400, { detail: ERROR_DETAILS.misplacedSecret });
  };
}
