import type { NextFunction, Request, RequestHandler, Response } from 'express';
import { middlewareChain } from './middleware-chain';

const request = {} as Request;
const response = {} as Response;
/** A plain handler doing `body` with its next function. */
const handler =
  (body: (next: NextFunction) => unknown): RequestHandler =>
  (_req, _res, next) =>
    void body(next);

function run(chain: ReturnType<typeof middlewareChain>): Promise<unknown> {
  return new Promise((resolve) => chain(request, response, (error?: unknown) => resolve(error)));
}

describe(middlewareChain.name, () => {
  it('runs the handlers in order and skips error handlers while there is no error', async () => {
    const calls: string[] = [];
    const chain = middlewareChain(
      handler((next) => (calls.push('a'), next())),
      (_error: unknown, _req: Request, _res: Response, next: NextFunction) => (
        calls.push('x'),
        next()
      ),
      handler((next) => (calls.push('b'), next())),
    );
    expect(await run(chain)).toBeUndefined();
    expect(calls).toEqual(['a', 'b']);
  });

  it('takes an error (passed, thrown or rejected) to the next error handler, past the others', async () => {
    const failures = [
      (_req: Request, _res: Response, next: NextFunction) => next(new Error('passed')),
      () => {
        throw new Error('thrown');
      },
      () => Promise.reject(new Error('rejected')),
    ];
    for (const fail of failures) {
      const seen: string[] = [];
      const chain = middlewareChain(
        fail,
        handler((next) => (seen.push('skipped'), next())),
        (error: Error, _req: Request, _res: Response, next: NextFunction) => {
          seen.push(error.message);
          next();
        },
        handler((next) => (seen.push('after'), next())),
      );
      expect(await run(chain)).toBeUndefined();
      expect(seen).toEqual([expect.stringMatching(/passed|thrown|rejected/), 'after']);
    }
  });

  it('passes an error nobody handled out of the chain', async () => {
    const error = new Error('out');
    const chain = middlewareChain(
      handler((next) => next(error)),
      handler((next) => next()),
    );
    expect(await run(chain)).toBe(error);
  });

  it('stops where a handler answers without calling next', async () => {
    let after = false;
    const chain = middlewareChain(
      () => undefined,
      handler((next) => ((after = true), next())),
    );
    chain(request, response, () => (after = true));
    await new Promise((resolve) => setImmediate(resolve));
    expect(after).toBe(false);
  });
});
