import type { OpenAPIObject } from '@nestjs/swagger';
import { allowedMethodsOf } from './allowed-methods';

/** Operations by path, as the document lists them; the operations' contents do not matter. */
function documentOf(paths: Record<string, string[]>): OpenAPIObject {
  return {
    openapi: '3.0.0',
    info: { title: 'test', version: '1' },
    paths: Object.fromEntries(
      Object.entries(paths).map(([path, methods]) => [
        path,
        Object.fromEntries(methods.map((method) => [method, { responses: {} }])),
      ]),
    ),
  };
}

const allowed = allowedMethodsOf(
  documentOf({
    '/api/v1/keys': ['get', 'post'],
    '/api/v1/keys/{id}': ['patch', 'delete', 'put'],
    '/api/v1/keys/current': ['get', 'put'],
    '/api/v1/tasks/{id}/dataset': ['get'],
    '/api/v1/report.json': ['get'],
  }),
);

describe(allowedMethodsOf.name, () => {
  it('lists the methods of a known path, HEAD with GET, each once', () => {
    expect(allowed('/api/v1/keys')).toEqual(['GET', 'HEAD', 'POST']);
    expect(allowed('/api/v1/keys/7')).toEqual(['PUT', 'DELETE', 'PATCH']);
    // Both a template and a fixed path match: their methods together, without repeats.
    expect(allowed('/api/v1/keys/current')).toEqual(['PUT', 'DELETE', 'PATCH', 'GET', 'HEAD']);
  });

  it('matches paths as the app routes them: case-sensitively, a trailing slash optional', () => {
    // Another case is no route (bootstrap.ts's 'case sensitive routing', as Starlette): a 404.
    expect(allowed('/API/V1/KEYS')).toEqual([]);
    expect(allowed('/api/v1/Keys/')).toEqual([]);
    expect(allowed('/api/v1/keys/')).toEqual(['GET', 'HEAD', 'POST']);
    expect(allowed('/api/v1/tasks/abc/dataset/')).toEqual(['GET', 'HEAD']);
  });

  it('knows no path that only contains, begins or ends like a route (those are a 404, not a 405)', () => {
    for (const path of [
      '/x/api/v1/keys',
      '/api/v1/keys/x/y',
      '/api/v1/keysx',
      '/api/v1/tasks/a/b/dataset',
      '/api/v1/tasks//dataset',
      '/api/v1/reportxjson',
    ])
      expect(allowed(path)).toEqual([]);
  });
});
