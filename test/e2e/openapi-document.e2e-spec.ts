import { readFile, writeFile } from 'node:fs/promises';
import type { OpenAPIV3 } from 'openapi-types';
import { OpenApiDocument, resolveSchema } from '../../bench/support/openapi';
import { schemaCheck } from '../../bench/support/openapi-schemas';
import {
  canonicalJson,
  OPENAPI_SNAPSHOT,
  OWASP_FINDINGS,
  owaspFindings,
  redoclyProblems,
} from '../support/openapi-snapshot';
import { startTestApp, TestApp } from '../support/test-app';

/** `npm run openapi:snapshot` runs this file with OPENAPI_SNAPSHOT=write to rewrite the copy. */
const WRITE = process.env.OPENAPI_SNAPSHOT === 'write';

/**
 * The numbers of the document that are not whole: every other numeric value is an integer. A new
 * `type: number` fails the test below until it is made an integer or, being fractional, is
 * added here.
 */
const FRACTIONAL = [
  'ComponentStatus.latency_ms', // milliseconds to two decimals
  'CountedValidator.share',
  'CountedValidator.stake', // TAO
  'DesirabilityJob.weight',
  'GravityJob.weight', // a network file's job, as written
  'GravityLegacyDesirability.label_weights.*',
  'LabelBytes.adj_total_bytes', // credibility-weighted, to two decimals
  'LegacyDesirability.label_weights.*',
  'Miner.credibility',
  'Miner.incentive',
  'Miner.stake', // TAO
  'MinersStatus.latency_ms', // inherited from ComponentStatus
  'MinerIndexStatus.latency_ms',
  'ChainStatus.latency_ms',
  'PublicationComponentStatus.latency_ms',
  'OnDemandMeta.consensus',
  'RedditItem.upvote_ratio',
  'TaskProgress.lifetime_elapsed',
].sort();

const OWASP_FINDINGS_HEADER = [
  '# Spectral with the OWASP ruleset (npm run lint:owasp) on docs/openapi.json: severity, rule, where.',
  '# Answered in docs/decisions.md, "OWASP lint of the document". Rewritten by npm run openapi:snapshot;',
  '# a line added in review is a finding the change brought.',
  '',
].join('\n');

/** The lines of `lines` left after taking out one of `taken` for each occurrence there. */
function without(lines: string[], taken: string[]): string[] {
  const left = new Map<string, number>();
  for (const line of taken) left.set(line, (left.get(line) ?? 0) + 1);
  return lines.filter((line) => {
    const count = left.get(line) ?? 0;
    left.set(line, count - 1);
    return count <= 0;
  });
}

const INTEGER_FORMATS = ['int32', 'int64'];
const NUMBER_FORMATS = ['double', 'float'];

interface NumericSchema {
  /** `Schema.property`, `Schema.map.*`, `header Name`, or `METHOD path [status] …` */
  where: string;
  type: string;
  format?: string;
}

/** Every `number` and `integer` schema of the document: properties, parameters, headers. */
function numericSchemas(document: {
  components: { schemas: object; headers: object };
  paths: Record<string, object>;
}): NumericSchema[] {
  const found: NumericSchema[] = [];
  const visit = (value: unknown, where: string): void => {
    if (typeof value !== 'object' || value === null) return;
    if (Array.isArray(value)) {
      for (const item of value) visit(item, where);
      return;
    }
    const schema = value as Record<string, unknown>;
    if (schema.type === 'number' || schema.type === 'integer')
      found.push({ where, type: schema.type, format: schema.format as string | undefined });
    for (const [key, child] of Object.entries(schema)) {
      if (key === 'example' || key === 'examples') continue;
      const named = Object.entries(child as object);
      if (key === 'properties') for (const [name, item] of named) visit(item, `${where}.${name}`);
      else if (key === 'additionalProperties') visit(child, `${where}.*`);
      else if (key === 'responses')
        for (const [status, item] of named) visit(item, `${where} ${status}`);
      else if (key === 'headers')
        for (const [name, item] of named) visit(item, `${where} header ${name}`);
      else if (key === 'parameters')
        for (const item of child as { name: string }[])
          visit(item, `${where} parameter ${item.name}`);
      else visit(child, where);
    }
  };
  for (const [name, schema] of Object.entries(document.components.schemas)) visit(schema, name);
  visit({ headers: document.components.headers }, 'components');
  for (const [path, item] of Object.entries(document.paths))
    for (const [method, operation] of Object.entries(item))
      visit(operation, `${method.toUpperCase()} ${path}`);
  return found;
}

type SchemaOrRef = OpenAPIV3.SchemaObject | OpenAPIV3.ReferenceObject;

interface DocumentedExample {
  where: string;
  schema: SchemaOrRef;
  value: unknown;
}

/**
 * The value Swagger UI shows for `schema`: its example (or default, or first enum value), else one
 * assembled from its properties' (the first branch of a union, one item of a list). Undefined
 * when nothing is given.
 */
function sample(document: OpenApiDocument, schema: SchemaOrRef | undefined, depth = 0): unknown {
  if (!schema || depth > 20) return undefined;
  if ('$ref' in schema) return sample(document, resolveSchema(document, schema), depth + 1);
  if (schema.example !== undefined) return schema.example;
  if (schema.default !== undefined) return schema.default;
  if (schema.enum) return schema.enum[0];
  const [branch] = schema.allOf ?? schema.oneOf ?? schema.anyOf ?? [];
  if (branch) return sample(document, branch, depth + 1);
  if (schema.type === 'array') {
    const item = sample(document, schema.items, depth + 1);
    return item === undefined ? undefined : [item];
  }
  if (!schema.properties) return undefined;
  const assembled: Record<string, unknown> = {};
  for (const [name, property] of Object.entries(schema.properties)) {
    const value = sample(document, property, depth + 1);
    if (value !== undefined) assembled[name] = value;
  }
  return assembled;
}

/** Every example of the document, given or assembled, with the schema it illustrates. */
function documentedExamples(document: OpenApiDocument): DocumentedExample[] {
  const found: DocumentedExample[] = [];
  const add = (where: string, schema: SchemaOrRef | undefined, value: unknown) => {
    if (schema && value !== undefined) found.push({ where, schema, value });
  };
  const media = (where: string, content: Record<string, OpenAPIV3.MediaTypeObject> = {}) => {
    const json = content['application/json'];
    if (!json) return;
    const examples = Object.entries(json.examples ?? {});
    for (const [name, example] of examples)
      add(`${where} example ${name}`, json.schema, (example as OpenAPIV3.ExampleObject).value);
    if (examples.length === 0) add(where, json.schema, sample(document, json.schema));
  };
  const headers = (where: string, all: OpenAPIV3.ResponseObject['headers'] = {}) => {
    for (const [name, header] of Object.entries(all))
      if (!('$ref' in header)) add(`${where} header ${name}`, header.schema, header.example);
  };
  for (const name of Object.keys(document.components?.schemas ?? {})) {
    const schema = { $ref: `#/components/schemas/${name}` };
    add(`schema ${name}`, schema, sample(document, schema));
  }
  headers('components', document.components?.headers);
  for (const [path, item] of Object.entries(document.paths))
    for (const [method, operation] of Object.entries(item ?? {}) as [
      string,
      OpenAPIV3.OperationObject,
    ][]) {
      const where = `${method.toUpperCase()} ${path}`;
      for (const parameter of (operation.parameters ?? []) as OpenAPIV3.ParameterObject[])
        add(
          `${where} parameter ${parameter.name}`,
          parameter.schema,
          parameter.example ?? sample(document, parameter.schema),
        );
      const body = operation.requestBody as OpenAPIV3.RequestBodyObject | undefined;
      media(`${where} body`, body?.content);
      for (const [status, response] of Object.entries(operation.responses)) {
        const answer = response as OpenAPIV3.ResponseObject;
        media(`${where} ${status}`, answer.content);
        headers(`${where} ${status}`, answer.headers);
      }
    }
  return found;
}

/** An operation as far as its inputs and responses go. */
interface Operation {
  requestBody?: object;
  parameters?: { in: string; schema?: Record<string, unknown> }[];
  responses: Record<string, object>;
}

/** An operation as far as its JSON request body goes. */
interface RequestBodies {
  requestBody: { content: { 'application/json': { schema: object } } };
}

describe('The served OpenAPI document', () => {
  let app: TestApp;
  let document: Parameters<typeof numericSchemas>[0];

  beforeAll(async () => {
    app = await startTestApp();
    document = (await app.http.get('/openapi.json').expect(200)).body;
    if (WRITE) await writeFile(OPENAPI_SNAPSHOT, canonicalJson(document));
  });
  afterAll(() => app.close());

  it('is the committed docs/openapi.json (after an interface change: npm run openapi:snapshot)', async () => {
    expect(canonicalJson(document)).toBe(await readFile(OPENAPI_SNAPSHOT, 'utf8'));
  });

  it('passes redocly lint with the recommended rules: no error, no warning', async () => {
    const problems = await redoclyProblems(document);
    expect(
      problems.map(
        ({ ruleId, message, location }) => `${ruleId} ${location[0]?.pointer}: ${message}`,
      ),
    ).toEqual([]);
  });

  it('has the OWASP lint findings docs/owasp-findings.txt lists, none added and none gone (after an interface change: npm run openapi:snapshot)', async () => {
    const found = await owaspFindings(document);
    if (WRITE) await writeFile(OWASP_FINDINGS, `${OWASP_FINDINGS_HEADER}${found.join('\n')}\n`);
    const listed = (await readFile(OWASP_FINDINGS, 'utf8'))
      .split('\n')
      .filter((line) => line !== '' && !line.startsWith('# '));
    expect(found.length).toBeGreaterThan(0);
    expect({ added: without(found, listed), gone: without(listed, found) }).toEqual({
      added: [],
      gone: [],
    });
  }, 180_000);

  it('gives every number a format, and types every whole number as an integer', () => {
    const numeric = numericSchemas(document);
    expect(numeric.length).toBeGreaterThan(100);
    const unformatted = numeric.filter(
      ({ type, format }) =>
        !(type === 'integer' ? INTEGER_FORMATS : NUMBER_FORMATS).includes(format ?? ''),
    );
    expect(unformatted).toEqual([]);
    const fractional = numeric.filter(({ type }) => type === 'number').map(({ where }) => where);
    expect(fractional.sort()).toEqual(FRACTIONAL);
  });

  // openapi-response-validator, which checks every e2e answer, reads a nullable enum as allowing
  // null whatever it lists; hey-api's client, keeping to OAS 3.0.3, threw on `network: null`.
  it('lists null in every nullable enum, which OpenAPI 3.0.3 asks for', () => {
    const unlisted: string[] = [];
    let nullable = 0;
    const visit = (value: unknown, where: string): void => {
      if (Array.isArray(value))
        return value.forEach((item, index) => visit(item, `${where}/${index}`));
      if (typeof value !== 'object' || value === null) return;
      const node = value as { nullable?: unknown; enum?: unknown[] };
      if (node.nullable === true && Array.isArray(node.enum)) {
        nullable += 1;
        if (!node.enum.includes(null)) unlisted.push(where);
      }
      for (const [key, child] of Object.entries(node))
        if (key !== 'example' && key !== 'examples') visit(child, `${where}/${key}`);
    };
    visit(document, '#');
    expect(nullable).toBeGreaterThanOrEqual(5);
    expect(unlisted).toEqual([]);
  });

  // A body, a query or header parameter, or a path parameter with a rule can fail validation: a
  // newcomer's audit added a query parameter without the operation's 422, and the snapshot, the
  // lint and the field checks all passed. The contract check found it only when a test sent a
  // bad value.
  it('documents the 422 of every operation whose input can fail validation', () => {
    const RULES = ['enum', 'pattern', 'minimum', 'maximum', 'minLength', 'maxLength', 'format'];
    const undocumented: string[] = [];
    const paths = (document as unknown as { paths: Record<string, Record<string, Operation>> })
      .paths;
    for (const [path, operations] of Object.entries(paths))
      for (const [method, operation] of Object.entries(operations)) {
        const validated =
          operation.requestBody !== undefined ||
          (operation.parameters ?? []).some(
            ({ in: where, schema }) =>
              where !== 'path' || RULES.some((rule) => schema?.[rule] !== undefined),
          );
        if (validated && operation.responses['422'] === undefined)
          undocumented.push(`${method.toUpperCase()} ${path}`);
      }
    expect(undocumented).toEqual([]);
  });

  // The service refuses unknown body fields (422 extra_forbidden); a validator generated from the
  // document must refuse them too.
  it.each([
    ['/api/v1/on_demand_data_request', 'post', { source: 'x', keywords: ['#tao'], keyword: 'x' }],
    ['/api/v1/keys', 'post', { name: 'ci', toString: 'x' }],
    ['/api/v1/keys/{id}', 'patch', { rate_limit: 5, limit: 5 }],
    [
      '/api/v1/set_desirabilities',
      'post',
      { desirabilities: [{ id: 't', weight: 1, params: { label: '#a', platform: 'x', tag: 1 } }] },
    ],
  ])('closes the request body of %s %s to fields it does not declare', (path, method, body) => {
    const paths = (document as unknown as { paths: Record<string, Record<string, RequestBodies>> })
      .paths;
    const schema = paths[path][method].requestBody.content['application/json'].schema;
    const check = schemaCheck(document as unknown as OpenApiDocument, { body: schema });
    expect(check('body', body).join('\n')).toMatch(/additional/i);
  });

  // Found in a browser (a Swagger UI audit): an operation whose required path parameter has no
  // example cannot be tried out as shipped; a date-time field without one is filled with the
  // browser's clock (a task window 1 ms long); an example's summary is shown as plain text in a
  // list, its backticks as they are.
  it('gives Swagger UI what its try-it-out needs: examples for path parameters and times, plain summaries', () => {
    const missing: string[] = [];
    const marked: string[] = [];
    const visit = (value: unknown, where: string): void => {
      if (Array.isArray(value)) return value.forEach((item) => visit(item, where));
      if (typeof value !== 'object' || value === null) return;
      const node = value as Record<string, unknown>;
      // What the service answers; a query's date-time stays empty until the user fills it.
      const answered = !where.includes('.parameters');
      if (answered && node.format === 'date-time' && !('example' in node)) missing.push(where);
      if (node.in === 'path' && !('example' in node) && !('examples' in node)) {
        const schema = node.schema as { enum?: unknown; example?: unknown } | undefined;
        if (!schema?.enum && schema?.example === undefined)
          missing.push(`${where} parameter ${String(node.name)}`);
      }
      if (typeof node.examples === 'object' && node.examples !== null)
        for (const [name, example] of Object.entries(node.examples))
          if (/[`*]/.test((example as { summary?: string }).summary ?? ''))
            marked.push(`${where} example ${name}`);
      for (const [key, child] of Object.entries(node))
        visit(child, key === 'properties' || key === 'paths' ? where : `${where}.${key}`);
    };
    visit(document, 'document');
    expect(missing).toEqual([]);
    expect(marked).toEqual([]);
  });

  it('gives examples that match their schemas, those Swagger UI assembles from fields included', () => {
    const examples = documentedExamples(document as unknown as OpenApiDocument);
    expect(examples.length).toBeGreaterThan(300);
    const check = schemaCheck(
      document as unknown as OpenApiDocument,
      Object.fromEntries(examples.map(({ schema }, index) => [String(index), schema])),
    );
    const wrong = examples.flatMap(({ where, value }, index) =>
      check(String(index), value).map((problem) => `${where}: ${problem}`),
    );
    expect(wrong).toEqual([]);
  });
});
