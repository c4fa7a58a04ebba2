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
});
