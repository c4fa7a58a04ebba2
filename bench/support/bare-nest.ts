import { CanActivate, Controller, Get, Module } from '@nestjs/common';
import { APP_GUARD, NestFactory } from '@nestjs/core';
import { ExpressAdapter, NestExpressApplication } from '@nestjs/platform-express';
import type { RequestHandler } from 'express';
import { ExpressServerAdapter } from '../../src/common/http/express-server-adapter';
import { announcePort } from './child-server';

/**
 * The body the bare Nest route answers with: the service's own health answer, parsed (Nest
 * serializes it again, to the same bytes).
 */
function fixedBody(): unknown {
  return JSON.parse(process.env.BENCH_FIXED_BODY ?? '{}');
}

@Controller()
class BareController {
  private readonly body = fixedBody();

  @Get('api/v1/health')
  health(): unknown {
    return this.body;
  }
}

@Module({ controllers: [BareController] })
class BareModule {}

/** The bare module with `guards` as global guards, in order (the lean path in guards). */
function guardedModule(guards: CanActivate[]) {
  @Module({
    controllers: [BareController],
    providers: guards.map((guard) => ({ provide: APP_GUARD, useValue: guard })),
  })
  class GuardedModule {}
  return GuardedModule;
}

/**
 * Child side: the floor the service is compared with: a Nest 11 app with one GET route and
 * nothing else (no body parser, middleware, guards, pipes, filters or request logging), on the
 * service's own Express adapter (`ExpressServerAdapter`), or with `stock`, on Nest's. What
 * separates it from bare node:http is what Nest and Express cost by themselves; what separates
 * the service from it (same adapter) is what the service adds. `middleware`, when given, runs in
 * front of the route (the least path: least-path.ts), and `guards` as its global guards.
 */
export async function serveBareNest(
  adapter: 'service' | 'stock',
  middleware?: RequestHandler,
  guards: CanActivate[] = [],
): Promise<void> {
  const app = await createBareNest(adapter, middleware, guards);
  await app.listen(0, '127.0.0.1');
  // Exit on SIGTERM rather than die of it: V8 writes a `--cpu-prof` profile only on exit.
  process.once('SIGTERM', () => process.exit(0));
  announcePort(app.getHttpServer());
}

/** The bare Nest app, not yet listening (serveBareNest; the lean path's spec). */
export async function createBareNest(
  adapter: 'service' | 'stock',
  middleware?: RequestHandler,
  guards: CanActivate[] = [],
): Promise<NestExpressApplication> {
  const app = await NestFactory.create<NestExpressApplication>(
    guards.length > 0 ? guardedModule(guards) : BareModule,
    adapter === 'service' ? new ExpressServerAdapter() : new ExpressAdapter(),
    { bodyParser: false, logger: ['error', 'warn'] },
  );
  if (middleware) {
    // As the service: no ETag (a hash per response) and no X-Powered-By (which helmet's headers
    // would remove again), so that both send the same headers.
    app.set('etag', false);
    app.disable('x-powered-by');
    app.use(middleware);
  }
  return app;
}
