import { UnauthorizedException } from '@nestjs/common';

/**
 * The `WWW-Authenticate` challenges of our 401s (RFC 9110 §11.6.1 requires one on every 401).
 * A key in a header has no registered scheme; `APIKey header="…"` is its usual spelling (the
 * OpenAPI document's `apiKey` security names the same header). `/metrics` also takes a bearer
 * token (RFC 6750), with `error="invalid_token"` after a wrong one.
 */
export const API_KEY_CHALLENGE = 'APIKey header="X-API-Key"';
export const METRICS_CHALLENGE = `${API_KEY_CHALLENGE}, Bearer`;
export const WRONG_METRICS_TOKEN_CHALLENGE = `${API_KEY_CHALLENGE}, Bearer error="invalid_token"`;

/** A 401 with its challenge, sent as `WWW-Authenticate` by AllExceptionsFilter. */
export class AuthenticationRequiredException extends UnauthorizedException {
  constructor(
    detail: string,
    readonly challenge: string,
  ) {
    super(detail);
  }
}
