/**
 * Why a request was answered 401, as its request line (`auth_failure`) and
 * `gateway_auth_failures_total{reason}` say it: a bounded word, never anything of what was sent.
 * `missing_key` also covers a key sent as `Authorization: Bearer` (not on /metrics), and a
 * bearer scheme with no token.
 */
export const AUTH_FAILURES = [
  'missing_key',
  'wrong_key',
  'deactivated_key',
  'expired_key',
  'wrong_metrics_token',
] as const;
export type AuthFailure = (typeof AUTH_FAILURES)[number];
