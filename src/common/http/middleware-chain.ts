import type { ErrorRequestHandler, NextFunction, Request, RequestHandler, Response } from 'express';

type Middleware = RequestHandler | ErrorRequestHandler;

/**
 * Express middleware run in order as one layer of Express's router, by Express's rules: a
 * handler that calls `next(error)` (or throws, or returns a rejected promise) skips to the next
 * error handler (four parameters) of the chain, else out of the chain with the error; without
 * an error, error handlers are skipped. Express's router costs about a microsecond per layer
 * per request (path matching, parameter processing), as much as the cheap middleware itself.
 * Only for middleware mounted on every path that never calls `next('route')` or `next('router')`
 * (which Express would take as skips, and this chain as errors).
 */
export function middlewareChain(...handlers: Middleware[]): RequestHandler {
  return (request: Request, response: Response, next: NextFunction): void => {
    let index = 0;
    const step = (error?: unknown): void => {
      while (index < handlers.length) {
        const handler = handlers[index++];
        const handlesErrors = handler.length === 4;
        if (Boolean(error) !== handlesErrors) continue;
        try {
          const result: unknown = error
            ? (handler as ErrorRequestHandler)(error, request, response, step)
            : (handler as RequestHandler)(request, response, step);
          if (result instanceof Promise)
            result.catch((rejection: unknown) => step(rejection ?? new Error('Rejected promise')));
        } catch (thrown) {
          step(thrown);
        }
        return;
      }
      next(error);
    };
    step();
  };
}
