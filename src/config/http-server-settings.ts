import { BODY_LIMIT_FORM, bytesOf } from '../common/http/body-limit';
import { EnvironmentVariables } from './environment-variables';

/** Under this, ordinary requests are refused: a vote of one job is about 200 bytes. */
const LEAST_BODY_LIMIT_BYTES = 1024;

/** `0b` passed, and every request with a body was a 413 (an operator audit). */
export function bodyLimitProblems(limit: string): string[] {
  // A limit of another form is refused by its own rule.
  if (!BODY_LIMIT_FORM.test(limit) || bytesOf(limit) >= LEAST_BODY_LIMIT_BYTES) return [];
  return ['BODY_LIMIT: must be at least 1kb (a smaller limit refuses ordinary requests with 413)'];
}

/**
 * Node's server refuses a headers timeout longer than the request timeout when given both at
 * construction; set as properties (common/http/client-errors.ts), they were taken, and the
 * request's limit cut a slow client first: the headers' never applied. (HTTP_REQUEST_TIMEOUT_MS
 * is at least 1000: 0, Node's "off", is not taken.) A value that is no number is refused by its
 * own rule.
 */
export function httpTimeoutProblems(vars: EnvironmentVariables): string[] {
  const { HTTP_HEADERS_TIMEOUT_MS: headers, HTTP_REQUEST_TIMEOUT_MS: request } = vars;
  if (!(headers > request)) return [];
  return [
    `HTTP_HEADERS_TIMEOUT_MS: ${headers} is longer than HTTP_REQUEST_TIMEOUT_MS (${request}), ` +
      'which bounds the headers too, so it would never apply; set it at most HTTP_REQUEST_TIMEOUT_MS',
  ];
}
