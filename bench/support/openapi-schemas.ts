import OpenAPIResponseValidator from 'openapi-response-validator';
import type { OpenAPIV3 } from 'openapi-types';

// The document's schemas as the answer checks read them (openapi.ts): ajv validators over
// closed objects, with the formats the document uses and OpenAPI 3.0's bounds made ajv's.

/**
 * The ajv validators (through openapi-response-validator) of one operation: one over the JSON
 * body of every response, one per response over its documented headers.
 */
export class ResponseValidators {
  private bodyValidator?: OpenAPIResponseValidator | null;
  private readonly headerValidators = new Map<string, OpenAPIResponseValidator | null>();

  constructor(
    private readonly responses: Record<string, OpenAPIV3.ResponseObject>,
    private readonly components: OpenAPIV3.ComponentsObject,
  ) {}

  body(): OpenAPIResponseValidator | undefined {
    if (this.bodyValidator === undefined) {
      const schemas: Record<string, { schema: OpenAPIV3.SchemaObject }> = {};
      for (const [key, response] of Object.entries(this.responses)) {
        const json = Object.keys(response.content ?? {}).find(isJson);
        const schema = json && response.content![json].schema;
        if (schema)
          schemas[key] = {
            schema: closeObjects(toJsonSchemaBounds(schema)) as OpenAPIV3.SchemaObject,
          };
      }
      this.bodyValidator = this.compile(schemas);
    }
    return this.bodyValidator ?? undefined;
  }

  headers(key: string): OpenAPIResponseValidator | undefined {
    if (!this.headerValidators.has(key)) {
      const documented = Object.entries(this.responses[key].headers ?? {});
      const properties = Object.fromEntries(
        documented.map(([name, header]) => [name, (header as OpenAPIV3.HeaderObject).schema ?? {}]),
      );
      const schema = { type: 'object', properties } as OpenAPIV3.SchemaObject;
      this.headerValidators.set(
        key,
        documented.length > 0
          ? this.compile({ [key]: { schema: toJsonSchemaBounds(schema) } })
          : null,
      );
    }
    return this.headerValidators.get(key) ?? undefined;
  }

  private compile(
    schemas: Record<string, { schema: OpenAPIV3.SchemaObject }>,
  ): OpenAPIResponseValidator | null {
    if (Object.keys(schemas).length === 0) return null;
    return new OpenAPIResponseValidator({
      responses: schemas,
      components: reachableComponents(schemas, this.components),
      customFormats: FORMATS,
    });
  }
}

const SCHEMA_REF = '#/components/schemas/';

/**
 * The component schemas `roots` reach through `$ref`s, the others left out: the validator hands
 * ajv every component with each response's schema, and ajv walks all it is given at each
 * compile. With the whole document's, the validators an e2e spec file compiled took about 1 s of
 * its CPU (a seventh of an app's spec file; `test/support/contract.ts` compiles them per file).
 */
function reachableComponents(
  roots: unknown,
  components: OpenAPIV3.ComponentsObject,
): OpenAPIV3.ComponentsObject {
  const all = components.schemas ?? {};
  const reached: NonNullable<OpenAPIV3.ComponentsObject['schemas']> = {};
  const pending: unknown[] = [roots];
  while (pending.length > 0) {
    const value = pending.pop();
    if (typeof value !== 'object' || value === null) continue;
    for (const [key, item] of Object.entries(value)) {
      if (key !== '$ref' || typeof item !== 'string') pending.push(item);
      else if (item.startsWith(SCHEMA_REF)) {
        const name = item.slice(SCHEMA_REF.length);
        if (!(name in reached) && name in all) {
          reached[name] = all[name];
          pending.push(all[name]);
        }
      }
    }
  }
  return { schemas: reached };
}

/**
 * A check of values against `schemas` (by name), read as the answer checks read them: $refs into
 * the document's components, formats checked, objects closed. Compiled once for all of them.
 */
export function schemaCheck(
  document: OpenAPIV3.Document,
  schemas: Record<string, OpenAPIV3.SchemaObject | OpenAPIV3.ReferenceObject>,
): (name: string, value: unknown) => string[] {
  const validator = new OpenAPIResponseValidator({
    responses: Object.fromEntries(
      Object.entries(schemas).map(([name, schema]) => [
        name,
        { schema: closeObjects(toJsonSchemaBounds(schema)) as OpenAPIV3.SchemaObject },
      ]),
    ),
    components: closeObjects(toJsonSchemaBounds(document.components ?? {})),
    customFormats: FORMATS,
  });
  return (name, value) => {
    const invalid = validator.validateResponse(name, structuredClone(value));
    return invalid ? [schemaErrors(invalid)] : [];
  };
}

/** The string formats the document uses, checked (ajv alone ignores unknown formats). */
const FORMATS = {
  'date-time': (value: string) =>
    /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/i.test(value) &&
    !Number.isNaN(Date.parse(value)),
  date: (value: string) => /^\d{4}-\d{2}-\d{2}$/.test(value) && !Number.isNaN(Date.parse(value)),
  uuid: (value: string) =>
    /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(value),
};

export function schemaErrors(invalid: { errors?: { path?: string; message: string }[] }): string {
  return (invalid.errors ?? [])
    .map((error) => `${error.path ? `${error.path}: ` : ''}${error.message}`)
    .join('; ');
}

export function isJson(mediaType: string): boolean {
  return /^application\/([\w.-]+\+)?json\b/i.test(mediaType);
}

/**
 * OpenAPI 3.0 writes an exclusive bound as `minimum: 0, exclusiveMinimum: true` (draft 4);
 * the validator's ajv 8 wants `exclusiveMinimum: 0`. Returns a converted copy.
 */
export function toJsonSchemaBounds<T>(value: T): T {
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

/**
 * A copy in which every object schema with `properties` and no `additionalProperties` of its
 * own forbids other members: an answer carrying a field the document does not name is a drift
 * the check must catch. The served document stays open (clients may expect new fields); only
 * the check is closed. Sound here because no schema merges partial objects with `allOf`.
 */
export function closeObjects<T>(value: T): T {
  if (Array.isArray(value)) return value.map(closeObjects) as T;
  if (typeof value !== 'object' || value === null) return value;
  const copy: Record<string, unknown> = {};
  for (const [key, item] of Object.entries(value)) copy[key] = closeObjects(item);
  if ('properties' in copy && !('additionalProperties' in copy)) copy.additionalProperties = false;
  return copy as T;
}
