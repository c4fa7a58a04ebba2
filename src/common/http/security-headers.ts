import type { IncomingMessage, OutgoingHttpHeader, ServerResponse } from 'node:http';
import type { NextFunction, Request, Response } from 'express';
import helmet, { HelmetOptions } from 'helmet';

/**
 * helmet's security headers, set per request in one pass. Which headers helmet sets depends on
 * its options only, never on the request, so they are read once, at start-up, by running helmet
 * against a response that records what it is told; helmet itself runs a dozen middleware
 * functions per request.
 */
export function securityHeaders(options: HelmetOptions) {
  const set: [string, OutgoingHttpHeader][] = [];
  const removed: string[] = [];
  const recorder = {
    setHeader: (name: string, value: OutgoingHttpHeader) => void set.push([name, value]),
    removeHeader: (name: string) => void removed.push(name),
  };
  let ran = false;
  helmet(options)({} as IncomingMessage, recorder as unknown as ServerResponse, (error) => {
    ran = error === undefined;
  });
  if (!ran)
    throw new Error('helmet did not pass a bare response on: its headers cannot be precomputed');
  return (_request: Request, response: Response, next: NextFunction): void => {
    for (const [name, value] of set) response.setHeader(name, value);
    for (const name of removed) response.removeHeader(name);
    next();
  };
}
