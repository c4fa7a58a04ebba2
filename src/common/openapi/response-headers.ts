import type { HeaderObject } from '@nestjs/swagger';
import {
  API_KEY_CHALLENGE,
  METRICS_CHALLENGE,
  WRONG_METRICS_TOKEN_CHALLENGE,
} from '../auth/authentication-required';
import { REQUEST_ID_PATTERN } from '../logging/logging.module';

/**
 * The headers the service puts on responses, documented once under `components.headers` and
 * referenced from every response they can appear on (see openapi-document.ts). A new header
 * a response carries belongs here.
 */

const SECONDS = { type: 'integer', format: 'int64', minimum: 0 } as const;

/** On every response, errors included (assigned before anything can answer). */
export const REQUEST_ID_HEADERS: Record<string, HeaderObject> = {
  'X-Request-Id': {
    description:
      'Id of the request: the `X-Request-Id` the client sent when it matches the pattern (and holds no ' +
      'secret), else a new UUID. Error bodies repeat it as `request_id`; logs carry it.',
    required: true,
    schema: {
      type: 'string',
      maxLength: 128,
      pattern: REQUEST_ID_PATTERN.source,
      example: '3f0c9a52-6a8e-4a57-9d1b-2a4c1f0e7b11',
    },
  },
};

/**
 * The answers given before the key is counted, which carry no rate-limit header: a response
 * lists the headers when any of its cases sends them, so a 422 that may be a body that is not
 * JSON lists them too (the guards and the body reader). Said once, in the API's description.
 */
export const ANSWERS_BEFORE_THE_COUNT =
  'a 400 but for a known secret outside the headers, a body that is not JSON (422 ' +
  '`json_invalid`), the 429 of too many failed authentications, a 500 or 503 met while the key ' +
  'is looked up (and every 401, 408, 413, 415 and 431)';

/**
 * Said on each rate-limit header, shortly: the list, repeated on each of five headers of every
 * response, made the Swagger UI page hard to read (a Swagger UI audit).
 */
const ABSENT_BEFORE_THE_COUNT =
  '. Absent on answers given before the key is counted (listed in the API description)';

/**
 * On every response to a request that was authenticated and counted against its key's budget;
 * absent when the request was refused before its key was checked (ABSENT_BEFORE_THE_COUNT) and
 * on operations that are not rate-limited.
 */
export const RATE_LIMIT_HEADERS: Record<string, HeaderObject> = {
  'X-RateLimit-Limit': {
    description:
      "Requests the key may make per window: its own `rate_limit`, else its class's" +
      ABSENT_BEFORE_THE_COUNT,
    schema: { type: 'integer', format: 'int64', minimum: 1, example: 100 },
  },
  'X-RateLimit-Remaining': {
    description: 'Requests the key has left in the current window' + ABSENT_BEFORE_THE_COUNT,
    schema: { type: 'integer', format: 'int64', minimum: 0, example: 99 },
  },
  'X-RateLimit-Reset': {
    description:
      'Seconds until the quota resets: the end of the window, or on a 429 the end of the cool-down ' +
      '(= `Retry-After`)' +
      ABSENT_BEFORE_THE_COUNT,
    schema: { ...SECONDS, example: 3599 },
  },
  'RateLimit-Policy': {
    description:
      "The key's quota policy in the IETF form (draft-ietf-httpapi-ratelimit-headers): " +
      '`"default";q=<requests per window>;w=<window seconds>`' +
      ABSENT_BEFORE_THE_COUNT,
    schema: {
      type: 'string',
      pattern: '^"default";q=\\d+;w=\\d+$',
      example: '"default";q=100;w=3600',
    },
  },
  RateLimit: {
    description:
      'What is left of it, IETF form: `"default";r=<requests left>;t=<seconds until it resets>` (the ' +
      'numbers of `X-RateLimit-Remaining` and `X-RateLimit-Reset`)' +
      ABSENT_BEFORE_THE_COUNT,
    schema: {
      type: 'string',
      pattern: '^"default";r=\\d+;t=\\d+$',
      example: '"default";r=99;t=3599',
    },
  },
};

/** On every 429: the budget's cool-down, or the lockout of an address after failed keys. */
export const RETRY_AFTER_HEADERS: Record<string, HeaderObject> = {
  'Retry-After': {
    description: 'Seconds to wait before trying again',
    required: true,
    schema: { ...SECONDS, minimum: 1, example: 3600 },
  },
};

/** On every 401: how to authenticate (RFC 9110 §11.6.1), set by the API-key guard. */
export const AUTHENTICATE_HEADERS: Record<string, HeaderObject> = {
  'WWW-Authenticate': {
    description:
      'The challenge: `APIKey header="X-API-Key"` (send a key in that header); on `/metrics` also ' +
      '`Bearer` (the metrics token, RFC 6750), with `error="invalid_token"` after a wrong one',
    required: true,
    schema: {
      type: 'string',
      enum: [API_KEY_CHALLENGE, METRICS_CHALLENGE, WRONG_METRICS_TOKEN_CHALLENGE],
      example: API_KEY_CHALLENGE,
    },
  },
};
