import { Injectable, PipeTransform } from '@nestjs/common';
import { RequestValidationException } from '../../common/errors/validation-error-item';
import { AppConfig } from '../../config/app-config';
import { InjectConfig } from '../../config/config.module';
import { parseDesirabilityRequest } from './desirability-parser';
import { ParsedSubmission } from './desirability.types';

/**
 * Turns a `set_desirabilities` body into a checked submission, or a 422 listing every
 * violation. The handler's parameter is typed by an interface, so the global
 * RequestValidationPipe leaves the raw body to this one. Its refusal is not recorded with the
 * request's other parameters (parameter-validations.ts): the operation has none. One given a
 * validated path, query or header parameter must record it (as a promise), or its 422 lists
 * whichever refusal came first.
 */
@Injectable()
export class DesirabilityRequestPipe implements PipeTransform<unknown, ParsedSubmission> {
  constructor(@InjectConfig() private readonly config: AppConfig) {}

  transform(body: unknown): ParsedSubmission {
    const parsed = parseDesirabilityRequest(body, this.config.desirability.maxJobs);
    if (!parsed.ok) throw new RequestValidationException(parsed.errors);
    return parsed.value;
  }
}
