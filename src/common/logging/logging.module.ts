import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { Module } from '@nestjs/common';
import { LoggerModule } from 'nestjs-pino';
import { AppConfig } from '../../config/app-config';
import { APP_CONFIG } from '../../config/config.module';

const REQUEST_ID = /^[\w.:-]{1,128}$/;

/** Honours a sane incoming X-Request-Id (from a load balancer), else makes one; echoes it back. */
export function requestId(request: IncomingMessage, response: ServerResponse): string {
  const incoming = request.headers['x-request-id'];
  const id = typeof incoming === 'string' && REQUEST_ID.test(incoming) ? incoming : randomUUID();
  response.setHeader('X-Request-Id', id);
  return id;
}

/** Key management paths carry a full key (`/keys/<key>/deactivate`): log only its prefix. */
export function redactUrl(url: string | undefined): string | undefined {
  return url?.replace(
    /(\/keys\/)([^/?]+)/,
    (_match, path: string, key: string) => `${path}${key.slice(0, 12)}…`,
  );
}

@Module({
  imports: [
    LoggerModule.forRootAsync({
      inject: [APP_CONFIG],
      useFactory: (config: AppConfig) => ({
        pinoHttp: {
          level: config.logLevel,
          genReqId: requestId,
          // Keys travel in headers; bodies of key requests are never logged (no body logging).
          redact: {
            paths: ['req.headers["x-api-key"]', 'req.headers.authorization', 'req.headers.cookie'],
            censor: '[redacted]',
          },
          serializers: {
            req: (req: { id: string; method: string; url: string }) => ({
              id: req.id,
              method: req.method,
              url: redactUrl(req.url),
            }),
          },
          customSuccessMessage: (req, res, time) =>
            `${req.method} ${redactUrl(req.url)} ${res.statusCode} ${Math.round(time)}ms`,
          transport:
            config.nodeEnv === 'development' && process.stdout.isTTY
              ? {
                  target: 'pino-pretty',
                  options: { singleLine: true, translateTime: 'SYS:HH:MM:ss.l' },
                }
              : undefined,
        },
      }),
    }),
  ],
})
export class LoggingModule {}
