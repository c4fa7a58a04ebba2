import { QUERY_FAILURE_REASONS } from '../../src/network/query-failures';
import { createKey } from '../support/fixtures';
import { syncIndexNow } from '../support/index-sync';
import { startTestNetwork, TestNetwork } from '../support/network';
import { swaggerUiOptionsOf } from '../support/swagger-ui-init';
import { startTestApp, TEST_MASTER_KEY, TestApp } from '../support/test-app';

/** Every operation of ../shared/spec/interface.md, as method and path. */
const INTERFACE_OPERATIONS = [
  ['post', '/api/v1/on_demand_data_request'],
  ['get', '/api/v1/list_repo_names'],
  ['post', '/api/v1/set_desirabilities'],
  ['get', '/api/v1/get_desirabilities'],
  ['get', '/api/v1/query_bucket/{source}'],
  ['get', '/api/v1/health'],
  ['get', '/api/v1/get_top_labels_by_source/{source}'],
  ['get', '/api/v1/ages'],
  ['get', '/api/v1/get_bytes_by_label'],
  ['get', '/api/v1/monitoring/system-status'],
  ['get', '/api/v1/keys'],
  ['post', '/api/v1/keys'],
  ['post', '/api/v1/keys/{key}/deactivate'],
] as const;

const RATE_LIMIT_HEADERS = [
  'X-RateLimit-Limit',
  'X-RateLimit-Remaining',
  'X-RateLimit-Reset',
  'RateLimit-Policy',
  'RateLimit',
] as const;

const INTERFACE_SCHEMAS = [
  'DataQueryRequest',
  'DataQueryResponse',
  'RepoNamesResponse',
  'DesirabilityRequest',
  'HealthResponse',
  'LabelSize',
  'AgeSize',
  'LabelBytes',
  'APIKeyCreate',
  'APIKeyResponse',
  'HTTPValidationError',
  'ValidationError',
];

interface Example {
  value: { detail: unknown };
}

interface Response {
  description: string;
  headers?: Record<string, { $ref: string }>;
  content?: Record<string, { schema?: unknown; examples?: Record<string, Example> }>;
}

interface Parameter {
  name: string;
  in?: string;
  required?: boolean;
  description?: string;
  example?: string | number;
  schema?: { example?: string | number; enum?: string[] };
}

interface Operation {
  operationId?: string;
  parameters?: Parameter[];
  security?: Record<string, string[]>[];
  requestBody?: { content: Record<string, { examples?: Record<string, { value: object }> }> };
  responses: Record<string, Response>;
}

interface Schema {
  type?: string;
  nullable?: boolean;
  required?: string[];
  properties?: Record<string, Schema>;
  items?: Schema & { oneOf?: unknown[]; discriminator?: unknown };
  $ref?: string;
}

type Document = {
  info: { title: string; description: string; version: string; license?: { name: string } };
  servers?: { url: string }[];
  paths: Record<string, Record<string, Operation>>;
  components: {
    schemas: Record<string, Schema>;
    securitySchemes: Record<string, Record<string, unknown>>;
    headers: Record<string, { required?: boolean; description?: string }>;
  };
};

/** Every operation of the document as [method, path, operation]. */
function operationsOf(document: Document): [string, string, Operation][] {
  return Object.entries(document.paths).flatMap(([path, item]) =>
    Object.entries(item).map(([method, operation]): [string, string, Operation] => [
      method,
      path,
      operation,
    ]),
  );
}

/** The `detail` of every example of a documented error status. */
function documentedDetails(operation: Operation, status: number): unknown[] {
  const examples = operation.responses[status]?.content?.['application/json']?.examples ?? {};
  return Object.values(examples).map((example) => example.value.detail);
}

describe('OpenAPI document', () => {
  let app: TestApp;
  let document: Document;

  beforeAll(async () => {
    // One unknown key per operation is more failed authentications than the default limit (20
    // a minute): the 401 test would meet the 429 that follows them.
    app = await startTestApp({ AUTH_FAILURE_LIMIT: '1000' });
    document = (await app.http.get('/openapi.json').expect(200)).body;
  });
  afterAll(() => app.close());

  it('is version 1.0.0 with a title', () => {
    expect(document.info.version).toBe('1.0.0');
    expect(document.info.title).toBeTruthy();
  });

  it.each(INTERFACE_OPERATIONS)(
    'lists %s %s with the X-API-Key scheme and its error responses',
    (method, path) => {
      const operation = document.paths[path]?.[method];
      expect(operation).toBeDefined();
      expect(operation.security).toEqual([{ ApiKey: [] }]);
      expect(operation.responses).toHaveProperty('401');
      expect(operation.responses).toHaveProperty('429');
    },
  );

  // The Swagger UI's Authorize dialog showed only the header's name: a reader who opened /docs
  // learned nowhere there which key to enter, nor where `npm start` put the one it generated.
  it('describes the X-API-Key header scheme, and where a key comes from', () => {
    expect(document.components.securitySchemes.ApiKey).toEqual({
      type: 'apiKey',
      in: 'header',
      name: 'X-API-Key',
      description: expect.stringMatching(/POST \/api\/v1\/keys[\s\S]*\.data\/master-key/),
    });
  });

  it('contains every schema of the interface', () => {
    for (const name of INTERFACE_SCHEMAS) expect(document.components.schemas).toHaveProperty(name);
  });

  it('serves the Swagger UI, which keeps no key in the browser', async () => {
    const response = await app.http.get('/docs').redirects(1).expect(200);
    expect(response.text).toContain('swagger-ui');
    // Every file the page loads is served; nothing else of the package's folder is.
    const page = (await app.http.get('/docs/').expect(200)).text;
    const loaded = [...page.matchAll(/(?:src|href)="([^"]+)"/g)].map((match) => match[1]);
    expect(loaded).toEqual(expect.arrayContaining(['./swagger-ui-bundle.js', './swagger-ui.css']));
    for (const file of loaded) {
      const served = await app.http.get(`/docs/${file.replace(/^\.\//, '')}`).expect(200);
      // And the source map a file names, which a browser's developer tools load.
      const map = /sourceMappingURL=([\w.-]+)/.exec(String(served.text ?? served.body))?.[1];
      if (map) await app.http.get(`/docs/${map}`).expect(200);
    }
    for (const file of [
      'package.json',
      'README.md',
      'index.html',
      'swagger-initializer.js',
      'swagger-ui-bundle.js.map',
      'log.bundle-sizes.swagger-ui.txt',
      'absolute-path.js',
      'oauth2-redirect.html',
      'package%2Ejson',
      './package.json',
      '../docs/package.json',
      '/',
      '//',
      '/index.html',
    ]) {
      const refused = await app.http.get(`/docs/${file}`).expect(404);
      expect(refused.body).toEqual({ detail: 'Not Found', request_id: expect.any(String) });
    }
    // The app routes case-sensitively, as Starlette: in another case the docs path is no page.
    await app.http.get('/DOCS/package.json').expect(404);
    await app.http.get('/DOCS//').expect(404);
    await app.http.get('/DOCS/').expect(404);
    await app.http.get('/Docs/swagger-ui.css').expect(404);
    // The licence notices the bundles point to stay served, and swagger-ui's own licence and
    // NOTICE (Apache-2.0 §4: they go with the code the page hands out; a licence audit's).
    await app.http.get('/docs/swagger-ui-bundle.js.LICENSE.txt').expect(200);
    expect((await app.http.get('/docs/LICENSE').expect(200)).text).toContain('Apache License');
    expect((await app.http.get('/docs/NOTICE').expect(200)).text).toContain('swagger-ui');
  });

  // An HTTP audit's: each was a 500, an ERROR line and a stack, asked without a key.
  it("answers the page files' unsatisfiable Range 416 and failed preconditions 412, in the error shape", async () => {
    const size = (await app.http.get('/docs/swagger-ui.css').expect(200)).headers['content-length'];
    for (const range of ['bytes=99999999-', 'bytes=5-1', 'bytes=-0']) {
      const refused = await app.http
        .get('/docs/swagger-ui.css')
        .set('Range', range)
        .expect(416)
        .expect('Content-Type', /^application\/json/)
        .expect('Content-Range', `bytes */${size}`);
      expect(refused.body).toEqual({
        detail: 'Range Not Satisfiable',
        request_id: expect.any(String),
      });
    }
    for (const [header, value] of [
      ['If-Match', '"nope"'],
      ['If-Unmodified-Since', 'Mon, 01 Jan 2001 00:00:00 GMT'],
    ]) {
      const refused = await app.http
        .get('/docs/swagger-ui.css')
        .set(header, value)
        .expect(412)
        .expect('Content-Type', /^application\/json/);
      expect(refused.headers['content-range']).toBeUndefined();
      expect(refused.body).toEqual({
        detail: 'Precondition Failed',
        request_id: expect.any(String),
      });
    }
    // A satisfiable range is served as asked.
    await app.http.get('/docs/swagger-ui.css').set('Range', 'bytes=0-9').expect(206);
  });

  // @nestjs/swagger writes the document into the script with String.replace, which reads `$&`,
  // "$`", `$'`, `$$` and `$1` in it as patterns: one in a description left the page blank.
  it('serves an init script that runs and gives the Swagger UI the served document', async () => {
    const init = await app.http.get('/docs/swagger-ui-init.js').expect(200);
    const options = swaggerUiOptionsOf(init.text);
    expect(options.spec).toEqual(document);
    expect(options.persistAuthorization).toBe(false);
  });

  it.each(['/docs', '/docs/', '/docs?x=1', '/docs/?x=1'])(
    'serves a page at %s whose files load from where the browser looks',
    async (path) => {
      // A browser resolves the page's relative paths against the address it ends up at.
      let address = new URL(path, 'http://gateway.test');
      let response = await app.http.get(path);
      if (response.status === 301) {
        address = new URL(response.headers.location, address);
        expect(address.search).toBe(new URL(path, 'http://gateway.test').search);
        response = await app.http.get(`${address.pathname}${address.search}`);
      }
      expect(response.status).toBe(200);
      const loaded = [...response.text.matchAll(/(?:src|href)="([^"]+)"/g)].map((m) => m[1]);
      expect(loaded.length).toBeGreaterThan(0);
      for (const file of loaded) {
        const { pathname } = new URL(file, address);
        expect({ file: pathname, status: (await app.http.get(pathname)).status }).toEqual({
          file: pathname,
          status: 200,
        });
      }
    },
  );

  it('types every whole-number query parameter as integer (1.5 is refused)', () => {
    const names = new Set(['limit', 'offset', 'start_bucket', 'end_bucket', 'uid']);
    const found: string[] = [];
    for (const [path, item] of Object.entries(document.paths))
      for (const operation of Object.values(item))
        for (const parameter of (operation as { parameters?: unknown[] }).parameters ?? []) {
          const { name, schema } = parameter as { name: string; schema?: { type?: string } };
          if (!names.has(name)) continue;
          found.push(`${path} ${name}`);
          expect({ path, name, type: schema?.type }).toEqual({ path, name, type: 'integer' });
        }
    expect(found.length).toBeGreaterThanOrEqual(7);
  });

  // Swagger UI's try-it-out fills a parameter with its example: a past instant as
  // completed_after listed only the tasks completed since, often none, as if there were no tasks.
  it("gives the task list's completed_after no example, only one in its description", () => {
    const parameter = document.paths['/api/v1/tasks'].get.parameters?.find(
      ({ name }) => name === 'completed_after',
    );
    expect(parameter).toBeDefined();
    expect(parameter).not.toHaveProperty('example');
    expect(parameter).not.toHaveProperty('examples');
    expect(parameter?.schema).not.toHaveProperty('example');
    expect(parameter?.description).toContain('`2026-11-24T12:00:00Z`');
  });

  it('names every operation with a unique camelCase operationId', () => {
    const ids = operationsOf(document).map(([, , operation]) => operation.operationId);
    for (const id of ids) expect(id).toMatch(/^[a-z][a-zA-Z]+$/);
    expect(new Set(ids).size).toBe(ids.length);
    expect(ids).toEqual(
      expect.arrayContaining(['queryOnDemandData', 'listApiKeys', 'createApiKey', 'getHealth']),
    );
  });

  it('describes every response, documents 500 and 503 everywhere, and X-Request-Id on each', () => {
    for (const [method, path, operation] of operationsOf(document)) {
      const statuses = Object.keys(operation.responses);
      expect({ method, path, statuses }).toEqual({
        method,
        path,
        statuses: expect.arrayContaining(['400', '401', '429', '500', '503']),
      });
      // 200, or 202 for what is only queued (a recompile, done by the next lifecycle pass).
      expect({ method, path, success: statuses.filter((status) => /^2/.test(status)) }).toEqual({
        method,
        path,
        success: [path.endsWith('/recompile') ? '202' : '200'],
      });
      for (const [status, response] of Object.entries(operation.responses)) {
        expect({ path, status, description: response.description }).toEqual({
          path,
          status,
          description: expect.stringMatching(/\S/),
        });
        expect(response.headers?.['X-Request-Id']).toEqual({
          $ref: '#/components/headers/X-Request-Id',
        });
      }
    }
    expect(document.components.headers['X-Request-Id'].required).toBe(true);
  });

  it('documents the rate-limit headers where they are sent (not before the budget), and Retry-After on 429', () => {
    const rateLimitHeaders: string[] = [...RATE_LIMIT_HEADERS];
    // Answered before the key's budget is counted (408 and 431 by Node's HTTP server, before
    // any route), so never with the rate-limit headers; but a known secret outside the headers,
    // refused once the key is admitted and charged (MisplacedSecretGuard).
    const examplesOf = (response: Response) =>
      Object.keys(response.content?.['application/json']?.examples ?? {});
    const beforeTheBudget = (status: string, response: Response) =>
      ['401', '408', '413', '415', '431'].includes(status) ||
      (status === '400' && !examplesOf(response).includes('misplacedSecret')) ||
      (status === '422' && examplesOf(response).every((name) => name === 'invalidJson'));
    for (const [, path, operation] of operationsOf(document)) {
      // Charged to no budget: the metrics scrape, and key administration (the master key's
      // emergency lever), whose only 429 is an address's lockout.
      const limited = path !== '/metrics' && !path.startsWith('/api/v1/keys');
      if (!limited) expect(documentedDetails(operation, 429)).not.toContain('Rate limit exceeded');
      for (const [status, response] of Object.entries(operation.responses)) {
        const names = Object.keys(response.headers ?? {});
        if (limited && !beforeTheBudget(status, response))
          expect({ path, status, names }).toEqual({
            path,
            status,
            names: expect.arrayContaining(rateLimitHeaders),
          });
        else
          expect({
            path,
            status,
            names: names.filter((name) => rateLimitHeaders.includes(name)),
          }).toEqual({ path, status, names: [] });
      }
      expect(Object.keys(operation.responses[429].headers ?? {})).toContain('Retry-After');
      expect(documentedDetails(operation, 429)).toContain(
        'Too many failed authentication attempts, try again later',
      );
    }
    expect(document.components.headers['Retry-After'].required).toBe(true);
  });

  // A response lists them when any of its cases sends them: the 422 of a body-taking operation
  // lists them, though its `json_invalid` is answered before the key is counted.
  it.each(RATE_LIMIT_HEADERS)(
    'says on %s that answers given before the key is counted do not carry it',
    (name) => {
      expect(document.components.headers[name].description).toContain(
        'Absent on answers given before the key is counted',
      );
      expect(document.info.description).toContain(
        'except on the answers given before the key is counted: a 400 but for a known secret ' +
          'outside the headers, a body that is not JSON (422 `json_invalid`)',
      );
    },
  );

  it('describes each response in its own words, none with a bare "Error"', () => {
    const generic = operationsOf(document).flatMap(([method, path, operation]) =>
      Object.entries(operation.responses)
        .filter(([, response]) => response.description.trim() === 'Error')
        .map(([status]) => `${method} ${path} ${status}`),
    );
    expect(generic).toEqual([]);
  });

  it('gives each error status an example body, both 401 texts included', () => {
    for (const [, path, operation] of operationsOf(document)) {
      for (const status of Object.keys(operation.responses).filter((code) => code >= '400'))
        expect({ path, status, details: documentedDetails(operation, Number(status)) }).toEqual({
          path,
          status,
          details: expect.arrayContaining([expect.anything()]),
        });
      expect(documentedDetails(operation, 401)).toEqual(
        expect.arrayContaining(['Missing API key', 'Invalid API key']),
      );
    }
  });

  it('types data items as X or Reddit items, told apart by source', () => {
    const { schemas } = document.components;
    for (const name of ['DataQueryResponse', 'QueryBucketSuccess'])
      expect(schemas[name].properties?.data.items).toEqual({
        oneOf: [
          { $ref: '#/components/schemas/XItem' },
          { $ref: '#/components/schemas/RedditItem' },
        ],
        discriminator: {
          propertyName: 'source',
          mapping: { X: '#/components/schemas/XItem', REDDIT: '#/components/schemas/RedditItem' },
        },
      });
    expect(schemas.XItem.required).toEqual(
      expect.arrayContaining([
        'uri',
        'datetime',
        'source',
        'label',
        'content',
        'user',
        'tweet',
        'media',
      ]),
    );
    expect(schemas.XTweet.properties?.hashtags).toMatchObject({
      type: 'array',
      items: { type: 'string' },
    });
    expect(schemas.RedditItem.properties?.communityName).toMatchObject({ type: 'string' });
    // Both kinds carry title and parentId: required, and null for the kind that lacks them.
    for (const field of ['title', 'parentId']) {
      expect(schemas.RedditItem.required).toContain(field);
      expect(schemas.RedditItem.properties?.[field]).toMatchObject({
        type: 'string',
        nullable: true,
      });
    }
  });

  it("types every field of the on-demand meta, miners_failed's reasons enumerated", () => {
    const { schemas } = document.components;
    expect(schemas.DataQueryResponse.required).toEqual(['status', 'data', 'meta']);
    expect(schemas.OnDemandMeta.required).toEqual(
      expect.arrayContaining(['miners_queried', 'miners_failed', 'consensus', 'cache_hit']),
    );
    const reasons = schemas.MinersFailed.properties?.reasons;
    expect(Object.keys(reasons?.properties ?? {})).toEqual([...QUERY_FAILURE_REASONS]);
    expect(reasons).toMatchObject({ type: 'object', additionalProperties: false });
  });

  it('has servers and the MIT license, and describes the metrics token as opaque (not a JWT)', () => {
    expect(document.servers?.length).toBeGreaterThan(0);
    expect(document.info.license?.name).toBe('MIT');
    const metricsToken = document.components.securitySchemes.MetricsToken;
    expect(metricsToken).toMatchObject({ type: 'http', scheme: 'bearer' });
    expect(metricsToken).not.toHaveProperty('bearerFormat');
  });

  it('answers a missing or unknown key with a documented 401 example, on every operation', async () => {
    for (const [method, path, operation] of operationsOf(document)) {
      const url = path.replace(/\{\w+\}/g, 'x');
      const call = () => app.http[method as 'get' | 'post'](url);
      const missing = await call().expect(401);
      const unknown = await call().set('X-API-Key', 'sk_live_unknown').expect(401);
      expect(documentedDetails(operation, 401)).toEqual(
        expect.arrayContaining([missing.body.detail, unknown.body.detail]),
      );
    }
  });

  it("answers a key below the operation's class with its documented 403 example", async () => {
    const regular = await createKey(app);
    const refused = operationsOf(document).filter(([, , operation]) => operation.responses[403]);
    expect(refused.length).toBeGreaterThanOrEqual(5);
    for (const [method, path, operation] of refused) {
      const url = path.replace(/\{\w+\}/g, 'x');
      const response = await app.http[method as 'get' | 'post'](url)
        .set('X-API-Key', regular.key)
        .expect(403);
      expect(documentedDetails(operation, 403)).toContain(response.body.detail);
    }
  });
});

describe("The documented on-demand request examples, on npm start's devnet", () => {
  let network: TestNetwork;
  let app: TestApp;

  beforeAll(async () => {
    // Seed 1 and 8 miners are the devnet `npm start` runs in development (src/devnet/devnet.ts,
    // DEVNET_MINERS).
    network = await startTestNetwork(8, 1);
    // Two bucket calls a miner an hour, as `npm start` takes them in front of its devnet (no
    // validator there): this app reads the devnet's metagraph file, whose default leaves a
    // validator its call, and after the spot checks the share kept for them would leave
    // `query_bucket` only the buckets they fetched (docs/decisions.md, "Users leave the spot
    // checks a share of the miners' bucket calls"). processes.e2e-spec.ts runs `npm start` itself.
    app = await startTestApp(
      { ...network.env, VALIDATOR_SHARES_HOTKEY: 'false' },
      { ownDatabase: true },
    );
  });
  afterAll(async () => {
    await app.close();
    await network.stop();
  });

  it('each returns items', async () => {
    const document = (await app.http.get('/openapi.json').expect(200)).body as Document;
    const body = document.paths['/api/v1/on_demand_data_request'].post.requestBody;
    const examples = Object.entries(body?.content['application/json'].examples ?? {});
    expect(examples.length).toBeGreaterThanOrEqual(2);
    for (const [name, { value }] of examples) {
      const response = await app.http
        .post('/api/v1/on_demand_data_request')
        .set('X-API-Key', TEST_MASTER_KEY)
        .send(value)
        .expect(200);
      expect({ name, status: response.body.status }).toEqual({ name, status: 'success' });
      expect(response.body.data.length).toBeGreaterThan(0);
    }
  });

  // Swagger UI's try-it-out sends a parameter's example as it stands; a path parameter without
  // one is picked by the reader from its enum, so each of its values is tried.
  const dataIn: Record<string, (body: Record<string, unknown> | unknown[]) => number> = {
    '/api/v1/ages': (body) => (body as unknown[]).length,
    '/api/v1/get_bytes_by_label': (body) => (body as { total_bytes: number }).total_bytes,
    '/api/v1/query_bucket/{source}': (body) => (body as { data?: unknown[] }).data?.length ?? 0,
  };

  describe('once the index is synced, as on start', () => {
    beforeAll(() => syncIndexNow(app));

    it.each(Object.keys(dataIn))('%s with its parameter examples returns data', async (path) => {
      const document = (await app.http.get('/openapi.json').expect(200)).body as Document;
      const parameters = document.paths[path].get.parameters ?? [];
      const query = new URLSearchParams();
      for (const parameter of parameters) {
        const example = parameter.example ?? parameter.schema?.example;
        if (parameter.in === 'query' && example !== undefined)
          query.set(parameter.name, String(example));
      }
      let addresses = [path];
      for (const parameter of parameters.filter((entry) => entry.in === 'path')) {
        const values =
          parameter.example !== undefined
            ? [String(parameter.example)]
            : (parameter.schema?.enum ?? []);
        addresses = addresses.flatMap((address) =>
          values.map((value) => address.replace(`{${parameter.name}}`, value)),
        );
      }
      for (const address of addresses) {
        const url = `${address}?${query.toString()}`;
        const response = await app.http.get(url).set('X-API-Key', TEST_MASTER_KEY).expect(200);
        expect({ url, body: response.body, data: dataIn[path](response.body) > 0 }).toEqual({
          url,
          body: response.body,
          data: true,
        });
      }
    });
  });
});
