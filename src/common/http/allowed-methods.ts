import type { OpenAPIObject } from '@nestjs/swagger';
import type { AllowedMethods } from '../errors/all-exceptions.filter';

const METHODS = ['get', 'put', 'post', 'delete', 'patch'] as const;

/**
 * The routes of the OpenAPI document, by path, as Express matches them (case-sensitive, as
 * configured in bootstrap.ts; a trailing slash optional, a `{parameter}` one segment): so that a
 * known path asked with a method it lacks is answered 405 with `Allow`, as FastAPI answers, rather
 * than 404.
 */
export function allowedMethodsOf(document: OpenAPIObject): AllowedMethods {
  const routes = Object.entries(document.paths).map(([template, item]) => ({
    pattern: new RegExp(`^${template.split('/').map(segmentPattern).join('/')}/?$`),
    methods: METHODS.filter((method) => item[method] !== undefined).flatMap((method) =>
      method === 'get' ? ['GET', 'HEAD'] : [method.toUpperCase()],
    ),
  }));
  return (path) => [
    ...new Set(
      routes.filter(({ pattern }) => pattern.test(path)).flatMap(({ methods }) => methods),
    ),
  ];
}

function segmentPattern(segment: string): string {
  return /^\{[^/]+\}$/.test(segment) ? '[^/]+' : segment.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
