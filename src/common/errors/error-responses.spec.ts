import { errorCase } from './error-cases';
import { errorResponse } from './error-responses';

describe(errorResponse.name, () => {
  it('describes a status in its own words', () => {
    const gone = errorCase(410, 'taskFailed', 'The task failed', "Task 'x' failed");
    expect(errorResponse(410, [gone]).description).toMatch(/^Gone/);
  });

  // A bare "Error" passed every check on descriptions and told the reader nothing.
  it('refuses a status it has no description for', () => {
    const teapot = errorCase(418, 'teapot', 'A teapot', "I'm a teapot");
    expect(() => errorResponse(418, [teapot])).toThrow('no description for status 418');
  });

  // Each case sends a fixed number of seconds: the schema says which, rather than "any integer".
  it("bounds a Retry-After by the seconds its status's cases send", () => {
    const down = errorCase(503, 'down', 'Down', 'Down', { retryAfter: 5 });
    const busy = errorCase(503, 'busy', 'Busy', 'Busy', { retryAfter: 10 });
    const missing = errorCase(503, 'missing', 'Missing', 'Missing');
    const header = errorResponse(503, [down, busy, missing]).headers?.['Retry-After'];
    expect(header).toMatchObject({
      description: expect.stringContaining('`down`, `busy` only'),
      schema: { type: 'integer', minimum: 5, maximum: 10, example: 5 },
    });
    expect(errorResponse(503, [missing]).headers).toBeUndefined();
  });
});
