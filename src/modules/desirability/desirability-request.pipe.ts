import { Injectable, PipeTransform } from '@nestjs/common';
import { RequestValidationException } from '../../common/errors/validation-error-item';
import { parseDesirabilityRequest } from './desirability-parser';
import { ParsedSubmission } from './desirability.types';

/**
 * Turns a `set_desirabilities` body into a checked submission, or a 422 listing every
 * violation. The handler's parameter is typed by an interface, so the global
 * RequestValidationPipe leaves the raw body to this one.
 */
@Injectable()
export class DesirabilityRequestPipe implements PipeTransform<unknown, ParsedSubmission> {
  transform(body: unknown): ParsedSubmission {
    const parsed = parseDesirabilityRequest(body);
    if (!parsed.ok) throw new RequestValidationException(parsed.errors);
    return parsed.value;
  }
}
