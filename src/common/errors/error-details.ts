/**
 * The fixed `detail` texts of the service's errors. The code that answers them and the OpenAPI
 * examples (error-cases.ts) both read them from here, so the documented examples are the
 * texts clients get.
 */
export const ERROR_DETAILS = {
  missingKey: 'Missing API key',
  /** No X-API-Key, but an Authorization header: the usual mistake (`Bearer <key>`). */
  keyInAuthorization: 'Missing API key: send it in the X-API-Key header, not Authorization',
  invalidKey: 'Invalid API key',
  keyExpired: 'API key expired',
  invalidMetricsToken: 'Invalid metrics token',
  needsValidatorKey: 'This operation requires a validator key',
  needsMasterKey: 'This operation requires the master key',
  needsMetricsAccess: 'Metrics need the master key or the metrics token',
  rateLimited: 'Rate limit exceeded',
  tooManyAuthFailures: 'Too many failed authentication attempts, try again later',
  bodyTooLarge: 'Request body too large',
  unsupportedEncoding: 'Unsupported request body encoding',
  malformedBody: 'Malformed request body',
  malformedRequest: 'Malformed HTTP request',
  headersTooLarge: 'Request headers too large',
  requestTimeout: 'Request not received in time',
  /** A path no operation has: FastAPI's text (Nest's own router says "Cannot GET /x"). */
  notFound: 'Not Found',
  /** A known path asked with a method it lacks: FastAPI's text. */
  methodNotAllowed: 'Method Not Allowed',
  /**
   * A secret outside the X-API-Key and Authorization headers (http/refuse-misplaced-secrets.ts,
   * http/misplaced-secret.guard.ts).
   */
  misplacedSecret:
    'The request carries a secret (an API key or token) outside the X-API-Key and Authorization ' +
    'headers, and was not processed: send keys in the X-API-Key header only',
  databaseUnavailable: 'Database unavailable, try again shortly',
  internalError: 'Internal server error',
} as const;
