import { readFile, writeFile } from 'node:fs/promises';
import { canonicalJson, OPENAPI_SNAPSHOT, redoclyProblems } from '../support/openapi-snapshot';
import { startTestApp, TestApp } from '../support/test-app';

/** `npm run openapi:snapshot` runs this file with OPENAPI_SNAPSHOT=write to rewrite the copy. */
const WRITE = process.env.OPENAPI_SNAPSHOT === 'write';

describe('The served OpenAPI document', () => {
  let app: TestApp;
  let document: unknown;

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
});
