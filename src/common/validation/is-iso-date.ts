import { ValidateBy, ValidationOptions } from 'class-validator';
import {
  dateRefusal,
  ISO_DATE_REFUSAL,
  parseIsoDate,
  parseRfc3339DateTime,
  queryDateTimeRefusal,
  RFC_3339_DATE_TIME_REFUSAL,
} from './iso-date';

/**
 * A date or date-time of the forms parseIsoDate reads (no zone = UTC; ISO_DATE_FORMS), parsed by
 * the same function the service uses, so that whatever passes validation can be read.
 */
export function IsIsoDate(options?: ValidationOptions): PropertyDecorator {
  return ValidateBy(
    {
      name: 'isIsoDate',
      validator: {
        validate: (value: unknown) =>
          typeof value === 'string' && parseIsoDate(value) !== undefined,
        defaultMessage: (args) => dateRefusal(args?.value, ISO_DATE_REFUSAL),
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
  return rfc3339DateTime((value) => dateRefusal(value, RFC_3339_DATE_TIME_REFUSAL), options);
}

/**
 * IsRfc3339DateTime for a query parameter: its refusal names an unencoded `+` read as a space
 * (queryDateTimeRefusal). Every date-time query parameter takes this one.
 */
export function IsRfc3339DateTimeInQuery(options?: ValidationOptions): PropertyDecorator {
  return rfc3339DateTime(queryDateTimeRefusal, options);
}

function rfc3339DateTime(
  refusal: (value: unknown) => string,
  options: ValidationOptions | undefined,
): PropertyDecorator {
  return ValidateBy(
    {
      name: 'isRfc3339DateTime',
      validator: {
        validate: (value: unknown) =>
          typeof value === 'string' && parseRfc3339DateTime(value) !== undefined,
        defaultMessage: (args) => refusal(args?.value),
      },
    },
    options,
  );
}
