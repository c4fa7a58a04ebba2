import type { NextFunction, Request, Response } from 'express';
import { whenResponseDone } from '../response-done';
import { MetricsService, UNMATCHED_ROUTE } from './metrics.service';

/**
 * Express middleware, installed before everything else (body parsing included) so that every
 * answered request is counted, even one rejected before routing. Labels are the route template
 * (`/api/v1/tasks/:id`), never the raw URL, so that series stay bounded; a request that matched
 * no route gets UNMATCHED_ROUTE. Costs one counter increment and one histogram observation.
 */
export function httpMetricsMiddleware(metrics: MetricsService) {
  return (request: Request, response: Response, next: NextFunction): void => {
    const started = process.hrtime.bigint();
    whenResponseDone(response, (answered, statusCode) => {
      // A response closed before it finished was not answered: counted apart.
      if (!answered) {
        metrics.recordUnansweredRequest(request.method, routeOf(request));
        return;
      }
      const seconds = Number(process.hrtime.bigint() - started) / 1e9;
      metrics.observeRequest(request.method, routeOf(request), statusCode, seconds);
    });
    next();
  };
}

function routeOf(request: Request): string {
  // Express sets `req.route` to the matched route; it is still there when the response ends.
  // A wildcard is not an endpoint: it is the route of catch-all middleware or of Nest's
  // not-found handler, left behind when no endpoint matched.
  const path = (request.route as { path?: unknown } | undefined)?.path;
  return typeof path === 'string' && !path.includes('*')
    ? `${request.baseUrl}${path}`
    : UNMATCHED_ROUTE;
}
