import { Store, storage } from 'nestjs-pino/storage';
import type { Logger } from 'pino';
import { recordParameterValidation, withOtherParameters } from './parameter-validations';
import {
  MAX_LISTED_UNKNOWN_FIELDS,
  RequestValidationException,
  ValidationErrorItem,
} from './validation-error-item';

const item = (location: string, field: string, type = 'missing'): ValidationErrorItem => ({
  loc: [location, field],
  msg: 'Field required',
  type,
});

/** Runs `body` in a request scope of its own, as requestLogging runs each request. */
const inRequest = <T>(body: () => T): T => storage.run(new Store({} as Logger), body);

/** A parameter's validation as the pipe records it: refused with `errors`, or passed. */
function validation(errors?: ValidationErrorItem[]): Promise<unknown> {
  const outcome = errors
    ? Promise.reject(new RequestValidationException(errors))
    : Promise.resolve({});
  // Nest's Promise.all handles each one; so does this test's caller.
  outcome.catch(() => undefined);
  recordParameterValidation(outcome);
  return outcome;
}

const refusalOf = (outcome: Promise<unknown>) =>
  outcome.then(
    () => {
      throw new Error('passed');
    },
    (error: RequestValidationException) => error,
  );

describe(withOtherParameters.name, () => {
  it("lists every refused parameter's errors in FastAPI's order: path, query, header, body", () =>
    inRequest(async () => {
      const body = validation([item('body', 'name')]);
      const header = validation([item('header', 'if-none-match')]);
      void validation();
      const query = validation([item('query', 'a'), item('query', 'b')]);
      const path = validation([item('path', 'source')]);
      // Whichever refusal reached the filter first, the same list.
      for (const first of [body, header, query, path]) {
        const joined = await withOtherParameters(await refusalOf(first));
        expect(joined?.errors.map((error) => error.loc)).toEqual([
          ['path', 'source'],
          ['query', 'a'],
          ['query', 'b'],
          ['header', 'if-none-match'],
          ['body', 'name'],
        ]);
      }
    }));

  it('answers a refusal as it is when no other parameter was validated', () =>
    inRequest(async () => {
      const refusal = await refusalOf(validation([item('query', 'a')]));
      expect(withOtherParameters(refusal)).toBeUndefined();
    }));

  it('answers a refusal as it is when the other parameters passed', () =>
    inRequest(async () => {
      void validation();
      const refusal = await refusalOf(validation([item('query', 'a')]));
      expect(await withOtherParameters(refusal)).toBe(refusal);
    }));

  // A service's own refusal (a PATCH naming no field) comes once every parameter passed.
  it('answers a refusal no parameter made as it is', () =>
    inRequest(async () => {
      void validation();
      void validation();
      const own = new RequestValidationException([item('body', 'name')]);
      expect(await withOtherParameters(own)).toBe(own);
    }));

  it('keeps the unknown fields of a body as they were capped', () =>
    inRequest(async () => {
      const unknown = Array.from({ length: MAX_LISTED_UNKNOWN_FIELDS + 5 }, (_, index) =>
        item('body', `extra${index}`, 'extra_forbidden'),
      );
      const body = validation(unknown);
      void validation([item('path', 'source')]);
      const capped = (await refusalOf(body)).errors;
      const joined = await withOtherParameters(await refusalOf(body));
      expect(joined?.errors).toEqual([
        { loc: ['path', 'source'], msg: 'Field required', type: 'missing' },
        ...capped,
      ]);
      expect(capped.at(-1)?.msg).toBe(
        'Extra inputs are not permitted: 5 more unknown fields, not listed',
      );
    }));

  it('keeps requests apart', async () => {
    const refusal = await inRequest(() => refusalOf(validation([item('query', 'a')])));
    await inRequest(() => refusalOf(validation([item('path', 'source')])));
    expect(inRequest(() => withOtherParameters(refusal))).toBeUndefined();
    expect(withOtherParameters(refusal)).toBeUndefined();
  });
});
