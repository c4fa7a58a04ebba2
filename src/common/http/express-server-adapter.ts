import { createServer, IncomingMessage, ServerResponse } from 'node:http';
import type { NestApplicationOptions } from '@nestjs/common';
import { ExpressAdapter } from '@nestjs/platform-express';
import type { Express } from 'express';

/**
 * Nest's Express adapter, but its HTTP server makes requests and responses that are Express's
 * from birth: their prototypes are the app's `request` and `response`. Express gives every
 * request and response those prototypes itself, with `Object.setPrototypeOf`, and V8 answers
 * that by moving both objects off their fast shapes: every later property access on them is
 * slower, and about a third of what a request allocates survives into the old generation
 * (`--trace-gc-nvp`). Made with them, Express's `setPrototypeOf` changes nothing. On a bare Nest
 * route this alone more than doubles the requests per second (`npm run bench:health`).
 * HTTPS and `forceCloseConnections` (neither used here) keep Nest's own server, as would a
 * Node whose IncomingMessage or ServerResponse were classes.
 */
export class ExpressServerAdapter extends ExpressAdapter {
  override initHttpServer(options: NestApplicationOptions): void {
    if (options.httpsOptions || options.forceCloseConnections || !bornExpressSupported()) {
      super.initHttpServer(options);
      return;
    }
    const app = this.getInstance<Express>();
    this.httpServer = createServer(
      {
        IncomingMessage: withPrototype<typeof IncomingMessage>(IncomingMessage, app.request),
        ServerResponse: withPrototype<typeof ServerResponse>(ServerResponse, app.response),
      },
      app,
    );
  }
}

/** True where Node's IncomingMessage and ServerResponse are plain functions (Node 20 to 24). */
export function bornExpressSupported(): boolean {
  const isClass = (type: unknown) => /^class\b/.test(Function.prototype.toString.call(type));
  return !isClass(IncomingMessage) && !isClass(ServerResponse);
}

/**
 * A constructor making `base` objects whose prototype is `prototype` (which derives from
 * `base.prototype`): `base` is called on the new object, as Node's own subclasses do.
 * `Reflect.construct` with a new target would work for classes too, but V8 then builds every
 * request on a slow path (measured: a third fewer requests per second than Nest's own server).
 */
function withPrototype<T extends new (...args: never[]) => object>(base: T, prototype: object): T {
  const construct = base as unknown as (this: object, ...args: unknown[]) => void;
  function Constructed(this: object, ...args: unknown[]): void {
    construct.apply(this, args);
  }
  Constructed.prototype = prototype;
  return Constructed as unknown as T;
}
