import { ValidateBy, ValidationOptions } from 'class-validator';
import { parseIsoDate } from './iso-date';

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
        defaultMessage: () =>
          'must be an ISO 8601 date or date-time, e.g. 2026-11-20 or 2026-11-20T12:00:00Z',
      },
    },
    options,
  );
}

/** A time of day followed by a zone: `Z` or an offset such as `+02:00`. */
const TIME_WITH_OFFSET =
  /[T ]\d{2}:\d{2}(?::\d{2}(?:[.,]\d{1,9})?)?\s*(?:Z|[+-]\d{2}(?::?\d{2})?)$/i;

/**
 * An ISO 8601 date-time with its UTC offset (`2099-12-31T23:59:59Z`): for instants a client
 * sets, where a zoneless value would silently mean UTC to us and local time to the client.
 */
export function IsIsoDateTimeWithOffset(options?: ValidationOptions): PropertyDecorator {
  return ValidateBy(
    {
      name: 'isIsoDateTimeWithOffset',
      validator: {
        validate: (value: unknown) =>
          typeof value === 'string' &&
          TIME_WITH_OFFSET.test(value.trim()) &&
          parseIsoDate(value) !== undefined,
        defaultMessage: () =>
          'must be an ISO 8601 date-time with a UTC offset, e.g. 2099-12-31T23:59:59Z',
      },
    },
    options,
  );
}
