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
  return (
    urlCarriesSecret(url, scanner) || (body !== undefined && scanner.contains(JSON.stringify(body)))
  );
}

/** As carriesSecret, for the path (but for the key to deactivate) and the query string only. */
function urlCarriesSecret(url: string, scanner: SecretScanner): boolean {
  const queryAt = url.indexOf('?');
  const path = queryAt === -1 ? url : url.slice(0, queryAt);
  const query = queryAt === -1 ? '' : url.slice(queryAt + 1);
  return (!KEY_PATH.test(path) && scanner.contains(path)) || scanner.contains(query);
}

/**
 * Secrets belong in the X-API-Key or Authorization header. A request that carries one anywhere
 * else is refused with a 400 before anything of it is stored (a secret as a task id or a label
 * would otherwise be shown to every key), and the client learns of its mistake. Two checks:
 * - this one, before routing, authentication and the request's log line: an issued key, known
 *   by its shape (`sk_live_` and 20 characters or more), in the URL, which is logged. A 400 for
 *   one tells the client nothing it did not send.
 * - MisplacedSecretGuard, once a key is admitted and its request charged to its budget: the
 *   body (for issued keys too), and the secrets known in clear (the master key, the tokens,
 *   SUBTENSOR_URL's credentials). Looked for here, the known secrets' 400 told anyone whether a
 *   guess at them was right, thousands of guesses a request, never counted towards the
 *   address's lockout; and a 1 MB body of escapes costs some 180 ms to scan in every encoding,
 *   which a client without a key could make every request of the service wait for (two audits'
 *   findings). Nothing reads the body before the guards, nor logs it.
 * `scanner` (every secret) redacts the URL of the warning; `logIntervalMs` spaces the warnings
 * (refusalWarnings).
 */
export function refuseMisplacedKeys(scanner: SecretScanner, logIntervalMs?: number) {
  // Refused before the request logger sees the request: said here, with the URL redacted.
  const warnings = refusalWarnings(logIntervalMs);
  return (request: Request, response: Response, next: NextFunction): void => {
    if (!urlCarriesSecret(request.url, ISSUED_KEY_SCANNER)) return next();
    warnings.warn(`${request.method} ${redactUrl(request.url, scanner)}`);
    sendError(request, response, 400, { detail: ERROR_DETAILS.misplacedSecret });
  };
}
