import { ValidateBy, ValidationOptions } from 'class-validator';
import { parseIsoDate } from '../../network/iso-date';

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
