import { createServer, IncomingMessage, ServerResponse } from 'node:http';
import type { NestApplicationOptions } from '@nestjs/common';
import { ExpressAdapter } from '@nestjs/platform-express';
import type { Express } from 'express';

/**
 * Nest's Express adapter, but its HTTP server makes requests and responses that are Express's
 * from birth. Express gives every request and response its app's prototypes (`app.request`,
 * `app.response`) with `Object.setPrototypeOf`, and V8 answers that by moving both objects off
 * their fast shapes: every later property access on them is slower, and about a third of what a
 * request allocates survives into the old generation (`--trace-gc-nvp`). Here the server builds
 * them from subclasses whose prototypes are the app's, so Express's `setPrototypeOf` changes
 * nothing. On a bare Nest route this alone about triples the requests per second (7,500 to
 * 24,000 here; `npm run bench:health` shows both). HTTPS and `forceCloseConnections` (neither
 * used here) keep Nest's own server.
 */
export class ExpressServerAdapter extends ExpressAdapter {
  override initHttpServer(options: NestApplicationOptions): void {
    if (options.httpsOptions || options.forceCloseConnections) {
      super.initHttpServer(options);
      return;
    }
    const app = this.getInstance<Express>();
    this.httpServer = createServer(
      {
        IncomingMessage: expressSubclass(IncomingMessage, app, 'request'),
        ServerResponse: expressSubclass(ServerResponse, app, 'response'),
      },
      app,
    );
  }
}

/**
 * A subclass of Node's `base` whose prototype takes the place of the app's `request` (or
 * `response`): the same chain (Express's methods, then Node's) and the same own properties
 * (`app`). A subclass, not a function calling `base` on an object given the prototype: V8 sizes
 * a class's objects for what its constructors set, and built the other way a response came out
 * a dictionary, slower still.
 */
function expressSubclass<T extends typeof IncomingMessage | typeof ServerResponse>(
  base: T,
  app: Express,
  which: 'request' | 'response',
): T {
  const expressPrototype = app[which] as object;
  const Subclass = class extends (base as new (...args: never[]) => object) {};
  Object.setPrototypeOf(Subclass.prototype, Object.getPrototypeOf(expressPrototype) as object);
  Object.defineProperties(Subclass.prototype, Object.getOwnPropertyDescriptors(expressPrototype));
  Object.assign(app, { [which]: Subclass.prototype });
  return Subclass as unknown as T;
}
