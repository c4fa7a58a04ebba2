import { readFile, writeFile } from 'node:fs/promises';
import { canonicalJson, OPENAPI_SNAPSHOT, redoclyProblems } from '../support/openapi-snapshot';
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
  'LabelBytes.adj_total_bytes', // credibility-weighted, to two decimals
  'LegacyDesirability.label_weights.*',
  'Miner.credibility',
  'Miner.incentive',
  'Miner.stake', // TAO
  'MinersStatus.latency_ms', // inherited from ComponentStatus
  'ChainStatus.latency_ms',
  'PublicationComponentStatus.latency_ms',
  'OnDemandMeta.consensus',
  'RedditItem.upvote_ratio',
  'TaskProgress.lifetime_elapsed',
].sort();

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
});
