import { Controller, Get, Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { NestExpressApplication } from '@nestjs/platform-express';
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

/**
 * Child side: the second floor the service is compared with: a Nest 11 app on the same
 * Express adapter with one GET route and nothing else (no body parser, middleware, guards,
 * pipes, filters or request logging). What separates it from bare node:http is what Nest and
 * Express cost by themselves; what separates the service from it is what the service adds.
 */
export async function serveBareNest(): Promise<void> {
  const app = await NestFactory.create<NestExpressApplication>(BareModule, {
    bodyParser: false,
    logger: ['error', 'warn'],
  });
  await app.listen(0, '127.0.0.1');
  announcePort(app.getHttpServer());
}
