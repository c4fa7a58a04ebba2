import { ValidateBy, ValidationOptions } from 'class-validator';
import { dateRefusal, parseIsoDate, parseRfc3339DateTime } from './iso-date';

/**
 * An ISO 8601 date or date-time (no zone = UTC), parsed by the same function the service uses,
 * so that whatever passes validation can be read.
 */
export function IsIsoDate(options?: ValidationOptions): PropertyDecorator {
  return ValidateBy(
    {
      name: 'isIsoDate',
      validator: {
        validate: (value: unknown) =>
          typeof value === 'string' && parseIsoDate(value) !== undefined,
        defaultMessage: (args) =>
          dateRefusal(
            args?.value,
            'must be an ISO 8601 date or date-time, e.g. 2026-11-20 or 2026-11-20T12:00:00Z',
          ),
      },
    },
    options,
  );
}

/**
 * An RFC 3339 date-time (`2099-12-31T23:59:59Z`, `…+02:00`): for instants a client sets, where a
 * zoneless value would silently mean UTC to us and local time to the client. The OpenAPI
 * document declares them `format: date-time`, which is RFC 3339: ISO 8601's other forms (a space
 * for `T`, `+0200`, no seconds) would be accepted here yet refused by clients' own validators.
 */
export function IsRfc3339DateTime(options?: ValidationOptions): PropertyDecorator {
  return ValidateBy(
    {
      name: 'isRfc3339DateTime',
      validator: {
        validate: (value: unknown) =>
          typeof value === 'string' && parseRfc3339DateTime(value) !== undefined,
        defaultMessage: (args) =>
          dateRefusal(
            args?.value,
            'must be an RFC 3339 date-time with its UTC offset, e.g. 2099-12-31T23:59:59Z',
          ),
      },
    },
    options,
  );
}
