import { INestApplication } from '@nestjs/common';
import { NestExpressApplication } from '@nestjs/platform-express';
import { OpenAPIObject, SwaggerModule } from '@nestjs/swagger';
import { Logger } from 'nestjs-pino';
import { AllExceptionsFilter } from './common/errors/all-exceptions.filter';
import { DatabaseOutageLog } from './common/database-outage-log';
import { bodyParserErrorHandler } from './common/errors/body-parser-errors';
import { answerClientErrors, socketAnswerRecorder } from './common/http/client-errors';
import { corsOptions } from './common/http/cors';
import { allowedMethodsOf } from './common/http/allowed-methods';
import { jsonBodies } from './common/http/json-bodies';
import { middlewareChain } from './common/http/middleware-chain';
import { repairPathEncoding } from './common/http/percent-encoding';
import { securityHeaders } from './common/http/security-headers';
import { RequestValidationPipe } from './common/errors/request-validation.pipe';
import { Clock } from './common/clock/clock';
import {
  LOGGING_SETTINGS,
  LoggingSettings,
  REQUEST_LINE_LOGGER,
  ROOT_LOGGER,
} from './common/logging/logging.module';
import { requestLogging } from './common/logging/request-logging';
import { httpMetricsMiddleware } from './common/metrics/http-metrics.middleware';
import { MetricsService } from './common/metrics/metrics.service';
import { onlyDocsFiles } from './common/openapi/docs-assets';
import { DOCS_PATH, OPENAPI_JSON_PATH, serveDocsPointer } from './common/openapi/docs-pointer';
import { buildOpenApiDocument } from './common/openapi/openapi-document';
import { refuseMisplacedKeys } from './common/http/refuse-misplaced-secrets';
import { originForm } from './common/http/origin-form';
import { requestsInTurn } from './common/http/pipelined-requests';
import { requireHost } from './common/http/require-host';
import { attachSecretScanner } from './common/security/secrets';
import { AppConfig } from './config/app-config';

/**
 * Everything about the HTTP app that is not a module: shared by main.ts, the tests and the
 * benchmarks, so that what is tested is what runs.
 */
export function configureApp(app: NestExpressApplication, config: AppConfig): void {
  app.useLogger(app.get(Logger));
  // The scanner the loggers scrub with (ConfigModule builds it from the configuration's secrets).
  const { scanner } = app.get<LoggingSettings>(LOGGING_SETTINGS);
  attachSecretScanner(app.getHttpAdapter().getInstance().locals, scanner);
  // Responses are dynamic JSON: an ETag would cost a hash per response and never match. The
  // dataset download and the statistics set their own, from what determines the answer.
  app.set('etag', false);
  // And they answer conditional requests themselves, by one matcher (common/http/entity-tags.ts).
  // Express's res.send would answer 304 on its own wherever its `fresh` check, which splits
  // If-None-Match at commas and spaces, finds the ETag set, a malformed value included that the
  // matcher reads as naming nothing (docs/decisions.md, "Miner index and statistics").
  Object.defineProperty(app.getHttpAdapter().getInstance().request, 'fresh', {
    configurable: true,
    get: () => false,
  });
  // Not set at all, rather than set by Express and removed by helmet on every response.
  app.disable('x-powered-by');
  // req.ip is the client behind the trusted proxies (TRUST_PROXY), for the failed-login limit.
  app.set('trust proxy', config.trustProxy);
  // Each chain is one layer of Express's router (middleware-chain.ts), in this order.
  app.use(
    middlewareChain(
      // An absolute-form target read as the origin form each check below expects.
      originForm,
      // Before body parsing: a request rejected by the body parser still gets its X-Request-Id,
      // its log line, and is counted.
      requestLogging(app.get(ROOT_LOGGER), app.get(REQUEST_LINE_LOGGER), scanner),
      httpMetricsMiddleware(app.get(MetricsService)),
      securityHeaders(`/${DOCS_PATH}`),
      // After the request's line and count are set up: a pipelined request dropped with its
      // connection is logged and counted as any request cut off.
      requestsInTurn(),
    ),
  );
  // Built before the routes' middleware, which knows from it which methods a path has.
  const document = buildOpenApiDocument(app);
  const allowedMethods = allowedMethodsOf(document);
  if (config.corsOrigins.length > 0)
    app.enableCors(corsOptions(config.corsOrigins, allowedMethods));
  app.use(
    middlewareChain(
      requireHost,
      repairPathEncoding,
      jsonBodies(config.bodyLimit),
      bodyParserErrorHandler,
      refuseMisplacedKeys(scanner),
      onlyDocsFiles(`/${DOCS_PATH}`),
    ),
  );
  app.useGlobalPipes(new RequestValidationPipe(app.get(Clock)));
  setupSwagger(app, document);
  serveDocsPointer(app);
  // The outage log health's probe ends (DatabaseOutageModule).
  app.useGlobalFilters(new AllExceptionsFilter(allowedMethods, app.get(DatabaseOutageLog)));
  answerClientErrors(
    app.getHttpServer(),
    { ...config.httpServer, bodyLimit: config.bodyLimit },
    app.get(Logger),
    allowedMethods,
    socketAnswerRecorder(app.get(REQUEST_LINE_LOGGER), app.get(MetricsService)),
  );
}

function setupSwagger(app: INestApplication, document: OpenAPIObject): void {
  SwaggerModule.setup(DOCS_PATH, app, document, {
    jsonDocumentUrl: OPENAPI_JSON_PATH,
    raw: ['json'],
    customSiteTitle: 'Data Universe Validator API',
    // The key typed into the UI is not kept in the browser's localStorage, where any script of
    // the page's origin reads it: the keys tried here include the master key.
    swaggerOptions: { persistAuthorization: false },
  });
}
