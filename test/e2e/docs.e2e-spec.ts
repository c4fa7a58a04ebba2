import { startTestApp, TestApp } from '../support/test-app';

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

interface Operation {
  security?: Record<string, string[]>[];
  responses: Record<string, unknown>;
}

describe('OpenAPI document', () => {
  let app: TestApp;
  let document: {
    info: { title: string; version: string };
    paths: Record<string, Record<string, Operation>>;
    components: { schemas: Record<string, unknown>; securitySchemes: Record<string, unknown> };
  };

  beforeAll(async () => {
    app = await startTestApp();
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

  it('documents 422 on every operation that takes input', () => {
    for (const [method, path] of INTERFACE_OPERATIONS) {
      const operation = document.paths[path][method];
      const takesInput =
        method === 'post' ||
        path.includes('{') ||
        ['/api/v1/ages', '/api/v1/get_bytes_by_label', '/api/v1/get_desirabilities'].includes(path);
      if (takesInput && path !== '/api/v1/keys/{key}/deactivate')
        expect(operation.responses).toHaveProperty('422');
    }
  });

  it('describes the X-API-Key header scheme', () => {
    expect(document.components.securitySchemes.ApiKey).toEqual({
      type: 'apiKey',
      in: 'header',
      name: 'X-API-Key',
    });
  });

  it('contains every schema of the interface', () => {
    for (const name of INTERFACE_SCHEMAS) expect(document.components.schemas).toHaveProperty(name);
  });

  it('serves the Swagger UI', async () => {
    const response = await app.http.get('/docs').redirects(1).expect(200);
    expect(response.text).toContain('swagger-ui');
  });

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
});
