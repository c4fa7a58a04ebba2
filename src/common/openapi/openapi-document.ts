import { INestApplication } from '@nestjs/common';
import { DocumentBuilder, OpenAPIObject, SwaggerModule } from '@nestjs/swagger';
import type {
  OperationObject,
  ReferenceObject,
  ResponseObject,
  SchemaObject,
} from '@nestjs/swagger';
import {
  API_KEY_SECURITY,
  METRICS_TOKEN_SECURITY,
  RATE_LIMITED_EXTENSION,
} from '../access/access.decorators';
import { BEFORE_THE_BUDGET_EXTENSION, STANDARD_RESPONSES } from '../errors/error-responses';
import { RATE_LIMIT_SETTINGS, RateLimitSettings } from '../throttling/rate-limit-settings';
import { API_VERSION } from '../version';
import {
  ANSWERS_BEFORE_THE_COUNT,
  AUTHENTICATE_HEADERS,
  RATE_LIMIT_HEADERS,
  REQUEST_ID_HEADERS,
  RETRY_AFTER_HEADERS,
} from './response-headers';
import { STORABLE_TEXT_REFUSAL } from '../validation/storable-text';
import { refuseReplacementPatterns } from './init-script-text';
import { listNullInNullableEnums } from './nullable-enums';

/**
 * The key classes' budgets as this gateway is configured (RATE_LIMIT_*), not as the defaults
 * are: a deployment that changes them documents what it enforces. The example headers are a
 * key's after its first request, a sixtieth of the window later (a minute of an hour): a minute
 * flat gave `t=1` for a 30 s window, which no response has then (an audit's finding).
 */
export function budgetsText({
  regularPerWindow,
  validatorPerWindow,
  windowSeconds,
}: RateLimitSettings) {
  const window = windowSeconds === 3600 ? 'hour' : `${windowSeconds} seconds`;
  const later = Math.max(windowSeconds - Math.max(Math.floor(windowSeconds / 60), 1), 1);
  return (
    `Regular keys have ${regularPerWindow} requests per ${window}, validator keys ${validatorPerWindow} ` +
    '(a key may have its own limit); responses carry the budget as `X-RateLimit-Limit`, ' +
    '`X-RateLimit-Remaining` and `X-RateLimit-Reset`, and in the IETF form ' +
    '(draft-ietf-httpapi-ratelimit-headers) as ' +
    `\`RateLimit-Policy: "default";q=${regularPerWindow};w=${windowSeconds}\` and ` +
    `\`RateLimit: "default";r=${regularPerWindow - 1};t=${later}\`, except on the answers ` +
    `given before the key is counted: ${ANSWERS_BEFORE_THE_COUNT}. Every other answer of an operation counts, ` +
    'errors included; a 429 does not. Going over the budget starts a cool-down of one window ' +
    '(`Retry-After`); a client that waits it out finds a new window with its whole budget.'
  );
}

/** Every tag an operation may carry (`@ApiTags`), in the order readers meet them. */
const TAGS: Record<string, string> = {
  Data: 'On-demand queries to the miner network',
  'Scraping tasks':
    "Validators' desirabilities (the scraping tasks), their lifecycle and their datasets",
  Repositories: "The miners' published dataset repositories",
  Statistics: "What the miners hold, from their indexes, and one bucket's items",
  Health: 'Health and per-component status',
  Miners: 'The neurons of the metagraph, as this gateway sees them',
  'API keys':
    'Issuing, listing, changing and deactivating keys (master key; not rate-limited, so that a leaked key can be deactivated whatever the master key has spent)',
  Monitoring: 'Prometheus metrics',
};

/**
 * Relative: the gateway that serves the document, wherever it runs. It is a public API
 * (`x-internal: false`, for inventories such as the OWASP ruleset's).
 */
const SERVER = {
  url: '/',
  description:
    'The gateway serving this document, in whichever environment it runs (local, staging or production)',
  'x-internal': false,
};

/**
 * The OpenAPI document of the app: what the decorators say, plus the facts true of every
 * operation, added here so no operation can miss them: the 500 and 503 answers and the headers
 * of every response (X-Request-Id; the rate-limit headers on rate-limited operations, except
 * on responses answered before the key's budget is counted; Retry-After on 429;
 * WWW-Authenticate on 401). No text of it may hold what the Swagger UI's init script would read
 * as a replacement pattern (init-script-text.ts). The served `/openapi.json` and the committed
 * docs/openapi.json are this.
 */
export function buildOpenApiDocument(app: INestApplication): OpenAPIObject {
  const builder = new DocumentBuilder()
    .setTitle('Data Universe Validator API')
    .setDescription(
      'On-demand queries to the miner network, scraping tasks (desirabilities), miner repositories, ' +
        'validator statistics and API keys. Every operation needs a key in the `X-API-Key` ' +
        'header; `GET /metrics` the master key there, or the METRICS_TOKEN as ' +
        '`Authorization: Bearer <token>`. ' +
        budgetsText(app.get<RateLimitSettings>(RATE_LIMIT_SETTINGS)) +
        ' ' +
        // Not a pattern in each schema: read without the `u` flag, it would refuse every emoji
        // (docs/decisions.md, "Text Postgres cannot store").
        "A client's text in a query or a body (key names, hotkeys, labels, keywords, usernames, " +
        'job ids) holding U+0000 or an unpaired UTF-16 surrogate is refused: 422 ' +
        '`string_pattern_mismatch`, with ' +
        // The pattern inside `ctx` as sent: in a code span of its own it ends in "$`", which the
        // Swagger UI's init script cannot hold (init-script-text.ts).
        `\`ctx\` \`${JSON.stringify(STORABLE_TEXT_REFUSAL.ctx)}\`. ` +
        // A path id is looked up, not validated (docs/decisions.md, "Text Postgres cannot store").
        'An id in a path holding one (`/api/v1/tasks/a%00b`) names nothing: 404.',
    )
    .setVersion(API_VERSION)
    .setLicense('MIT', 'https://opensource.org/licenses/MIT')
    // What the Swagger UI's Authorize dialog shows beside the field: without it a reader of
    // /docs learned nowhere there which key to enter.
    .addApiKey(
      {
        type: 'apiKey',
        in: 'header',
        name: 'X-API-Key',
        description:
          "A key issued by this gateway's administrator (`POST /api/v1/keys`, with the master " +
          'key), or the master key. In development, `npm start` generates a master key at its ' +
          'first start, prints it and saves it in `.data/master-key` (`DATA_DIR/master-key`).',
      },
      API_KEY_SECURITY,
    )
    // addSecurity, not addBearerAuth: that one declares `bearerFormat: JWT`.
    .addSecurity(METRICS_TOKEN_SECURITY, {
      type: 'http',
      scheme: 'bearer',
      description:
        'The METRICS_TOKEN the service is configured with, for GET /metrics only: an opaque shared ' +
        'secret compared as is (not a JWT)',
    });
  for (const [name, description] of Object.entries(TAGS)) builder.addTag(name, description);
  const config = builder.build();
  config.servers = [SERVER];
  return finish(SwaggerModule.createDocument(app, config));
}

function finish(document: OpenAPIObject): OpenAPIObject {
  const components = (document.components ??= {});
  components.headers = {
    ...REQUEST_ID_HEADERS,
    ...RATE_LIMIT_HEADERS,
    ...RETRY_AFTER_HEADERS,
    ...AUTHENTICATE_HEADERS,
  };
  for (const [path, item] of Object.entries(document.paths)) {
    for (const operation of operationsOf(item)) {
      for (const tag of operation.tags ?? [])
        if (!(tag in TAGS)) throw new Error(`${path}: tag '${tag}' is not in the document's TAGS`);
      const rateLimited = Reflect.get(operation, RATE_LIMITED_EXTENSION) === true;
      Reflect.deleteProperty(operation, RATE_LIMITED_EXTENSION);
      for (const [status, response] of Object.entries(STANDARD_RESPONSES))
        operation.responses[status] ??= structuredClone(response);
      for (const [status, response] of Object.entries(operation.responses))
        if (response) addHeaders(Number(status), response, rateLimited);
    }
  }
  closeRequestBodies(document);
  // Only now: a class-level decorator's response is one object shared by the class's operations.
  for (const item of Object.values(document.paths))
    for (const operation of operationsOf(item))
      for (const response of Object.values(operation.responses))
        if (response) Reflect.deleteProperty(response, BEFORE_THE_BUDGET_EXTENSION);
  listNullInNullableEnums(document);
  refuseReplacementPatterns(document);
  return document;
}

/**
 * Request bodies refuse fields they do not declare (422 `extra_forbidden`, as the original's
 * models do), at every level: their object schemas say so with `additionalProperties: false`,
 * so that a client or validator generated from the document refuses what the service would. A
 * map (`label_weights`) keeps its own `additionalProperties`. A schema a response shares (a
 * vote, shown as submitted) is closed too: what it shows passed the same check.
 */
function closeRequestBodies(document: OpenAPIObject): void {
  const schemas = document.components?.schemas ?? {};
  const visited = new Set<string>();
  const close = (schema: SchemaObject | ReferenceObject | undefined): void => {
    if (!schema) return;
    if ('$ref' in schema) {
      const name = schema.$ref.slice(schema.$ref.lastIndexOf('/') + 1);
      if (visited.has(name)) return;
      visited.add(name);
      close(schemas[name]);
      return;
    }
    if (schema.allOf) throw new Error('a request schema uses allOf, which a closed schema breaks');
    if (schema.properties && schema.additionalProperties === undefined)
      schema.additionalProperties = false;
    const map =
      typeof schema.additionalProperties === 'object' ? schema.additionalProperties : undefined;
    for (const child of [
      ...Object.values(schema.properties ?? {}),
      schema.items,
      ...(schema.oneOf ?? []),
      ...(schema.anyOf ?? []),
      map,
    ])
      close(child);
  };
  for (const item of Object.values(document.paths))
    for (const operation of operationsOf(item)) {
      const body = operation.requestBody;
      if (body && !('$ref' in body))
        for (const media of Object.values(body.content)) close(media.schema);
    }
}

function operationsOf(item: OpenAPIObject['paths'][string]): OperationObject[] {
  return [item.get, item.put, item.post, item.delete, item.patch].filter(
    (operation): operation is OperationObject => operation !== undefined,
  );
}

function addHeaders(
  status: number,
  response: ResponseObject | ReferenceObject,
  rateLimited: boolean,
): void {
  if ('$ref' in response) return;
  // 400, 401, 413, 415 and a body that is not JSON are answered before the budget is counted.
  const beforeTheBudget = Reflect.get(response, BEFORE_THE_BUDGET_EXTENSION) === true;
  const names = [
    ...Object.keys(REQUEST_ID_HEADERS),
    ...(rateLimited && !beforeTheBudget ? Object.keys(RATE_LIMIT_HEADERS) : []),
    ...(status === 429 ? Object.keys(RETRY_AFTER_HEADERS) : []),
    ...(status === 401 ? Object.keys(AUTHENTICATE_HEADERS) : []),
  ];
  response.headers = {
    ...response.headers,
    ...Object.fromEntries(names.map((name) => [name, { $ref: `#/components/headers/${name}` }])),
  };
}
