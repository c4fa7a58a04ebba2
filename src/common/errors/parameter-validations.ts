import { storage } from 'nestjs-pino/storage';
import { Location, RequestValidationException, ValidationErrorItem } from './validation-error-item';

/**
 * The validations of a request's parameters (RequestValidationPipe's calls), by its request
 * scope (logging/request-logging.ts runs every request in one): Nest runs each parameter's pipes
 * on its own (`Promise.all`) and hands the first refusal to the exception filter, the others'
 * outcomes being dropped. A WeakMap, so that the list goes with the scope, and only requests
 * with a validated parameter have one.
 */
const started = new WeakMap<object, Promise<unknown>[]>();

/** Records a parameter's validation, as it starts, in the request's list. */
export function recordParameterValidation(validation: Promise<unknown>): void {
  const scope = storage.getStore();
  if (!scope) return;
  const validations = started.get(scope);
  if (validations) validations.push(validation);
  else started.set(scope, [validation]);
}

/** FastAPI's order (`solve_dependencies`): path, query, header, then body errors. */
const LOCATION_ORDER: readonly Location[] = ['path', 'query', 'header', 'body'];

const rank = (item: ValidationErrorItem) => LOCATION_ORDER.indexOf(item.loc[0] as Location);

/**
 * The refusal of one parameter joined with those of the request's other parameters, in one 422
 * listing every location's errors in FastAPI's order; undefined when there is nothing to wait
 * for (one validated parameter, or none: the refusal is answered as it is).
 *
 * Deterministic, not timed: every parameter's validation has started (and is recorded) by the
 * time a refusal reaches the filter. Nest starts each parameter's pipes in one synchronous
 * `map` inside `Promise.all`, and RequestValidationPipe, the one global pipe, is the first of
 * each: all are called in the same microtask round, while a refusal takes several more to pass
 * through `Promise.all`, the handler's proxy and the exceptions handler. Waiting for them all to
 * settle then gives the same list, whichever ended first. A refusal that is not one of them (a
 * service's own, once every parameter passed) is answered as it is.
 */
export function withOtherParameters(
  refusal: RequestValidationException,
): Promise<RequestValidationException> | undefined {
  const scope = storage.getStore();
  const validations = scope && started.get(scope);
  if (!validations || validations.length < 2) return undefined;
  return Promise.allSettled(validations).then((outcomes) => {
    const refusals = outcomes.flatMap((outcome) =>
      outcome.status === 'rejected' && outcome.reason instanceof RequestValidationException
        ? [outcome.reason]
        : [],
    );
    if (!refusals.includes(refusal) || refusals.length < 2) return refusal;
    // Stable: each location's own errors keep their order (its DTO's).
    const errors = refusals.flatMap((each) => each.errors).sort((a, b) => rank(a) - rank(b));
    return new RequestValidationException(errors);
  });
}
