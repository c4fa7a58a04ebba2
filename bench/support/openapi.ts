import OpenAPIResponseValidator from 'openapi-response-validator';
import type { OpenAPIV3 } from 'openapi-types';

export type OpenApiDocument = OpenAPIV3.Document;
export type Schema = OpenAPIV3.SchemaObject;

/** One operation of the live document, with what the generators and the oracle need. */
export interface Operation {
  /** `POST /api/v1/keys`: how reports name it. */
  name: string;
  method: string;
  template: string;
  /** The template's segments; `{name}` segments are path parameters. */
  segments: string[];
  parameters: OpenAPIV3.ParameterObject[];
  /** The JSON request body's schema, $refs left in place. */
  bodySchema?: Schema | OpenAPIV3.ReferenceObject;
  /** Documented statuses with the content type of each (undefined: no body documented). */
  responses: Map<number, string | undefined>;
  validator: OpenAPIResponseValidator;
}

const METHODS = ['get', 'post', 'put', 'patch', 'delete'] as const;

/** Every operation of `/openapi.json`, each with a response validator over its components. */
export function readOperations(document: OpenApiDocument): Operation[] {
  const operations: Operation[] = [];
  for (const [template, item] of Object.entries(document.paths)) {
    for (const method of METHODS) {
      const operation = item?.[method];
      if (!operation) continue;
      const responses = operation.responses as Record<string, OpenAPIV3.ResponseObject>;
      const body = operation.requestBody as OpenAPIV3.RequestBodyObject | undefined;
      operations.push({
        name: `${method.toUpperCase()} ${template}`,
        method: method.toUpperCase(),
        template,
        segments: template.split('/'),
        parameters: (operation.parameters ?? []) as OpenAPIV3.ParameterObject[],
        bodySchema: body?.content['application/json']?.schema,
        responses: new Map(
          Object.entries(responses).map(([status, response]) => [
            Number(status),
            Object.keys(response.content ?? {})[0],
          ]),
        ),
        validator: new OpenAPIResponseValidator({
          responses: responses as never,
          components: toJsonSchemaBounds(document.components),
        }),
      });
    }
  }
  return operations;
}

/**
 * The operation Express would route `method pathname` to: routing is case-insensitive and
 * tolerates one trailing slash (Express defaults); a parameter takes one non-empty segment.
 * HEAD is answered by the GET route.
 */
export function matchOperation(
  operations: readonly Operation[],
  method: string,
  pathname: string,
): Operation | undefined {
  const wanted = method === 'HEAD' ? 'GET' : method;
  const segments = pathname.replace(/(.)\/$/, '$1').split('/');
  // A literal segment wins over a parameter (`/tasks/x` is not `/tasks/{id}/dataset`).
  return operations.find(
    (operation) =>
      operation.method === wanted &&
      operation.segments.length === segments.length &&
      operation.segments.every((part, index) =>
        part.startsWith('{')
          ? segments[index] !== ''
          : part.toLowerCase() === segments[index].toLowerCase(),
      ),
  );
}

/** Follows a local `#/components/schemas/X` reference. */
export function resolveSchema(
  document: OpenApiDocument,
  schema: Schema | OpenAPIV3.ReferenceObject,
): Schema {
  if (!('$ref' in schema)) return schema;
  const name = schema.$ref.replace('#/components/schemas/', '');
  const target = document.components?.schemas?.[name];
  if (!target) throw new Error(`unresolved $ref ${schema.$ref}`);
  return resolveSchema(document, target);
}

/**
 * OpenAPI 3.0 writes an exclusive bound as `minimum: 0, exclusiveMinimum: true` (draft 4);
 * the validator's ajv 8 wants `exclusiveMinimum: 0`. Returns a converted copy.
 */
function toJsonSchemaBounds<T>(value: T): T {
  if (Array.isArray(value)) return value.map(toJsonSchemaBounds) as T;
  if (typeof value !== 'object' || value === null) return value;
  const copy: Record<string, unknown> = {};
  for (const [key, item] of Object.entries(value)) copy[key] = toJsonSchemaBounds(item);
  for (const [flag, bound] of [
    ['exclusiveMinimum', 'minimum'],
    ['exclusiveMaximum', 'maximum'],
  ]) {
    if (copy[flag] === true) {
      copy[flag] = copy[bound];
      delete copy[bound];
    } else if (copy[flag] === false) delete copy[flag];
  }
  return copy as T;
}
