import express from 'express';
import supertest from 'supertest';
import { ERROR_DETAILS } from '../errors/error-details';
import { onlyDocsFiles } from './docs-assets';

/** An app whose static folder (here: any path) answers 200 to whatever the check lets through. */
function app() {
  const server = express();
  server.use(onlyDocsFiles('/docs'));
  server.use((_request, response) => {
    response.json({ passedOn: true });
  });
  return supertest(server);
}

describe(onlyDocsFiles.name, () => {
  it("passes on the page's own files, to GET and HEAD", async () => {
    for (const path of ['/docs', '/docs/', '/docs/swagger-ui.css', '/docs/swagger-ui-init.js']) {
      await app().get(path).expect(200, { passedOn: true });
      await app().head(path).expect(200);
    }
  });

  it("refuses the folder's other files with the 404 of an unknown path, to HEAD as to GET", async () => {
    // A HEAD answered 200 would still tell which files are there, and their sizes.
    for (const path of ['/docs/package.json', '/docs/index.html', '/docs//', '/docs/README.md']) {
      const refused = await app().get(path).expect(404);
      expect(refused.body).toMatchObject({ detail: ERROR_DETAILS.notFound });
      await app().head(path).expect(404);
    }
  });

  it('leaves other paths and methods to their routes', async () => {
    await app().get('/docsx/package.json').expect(200);
    await app().get('/api/v1/docs/package.json').expect(200);
    await app().post('/docs/package.json').expect(200);
    // The app routes case-sensitively (bootstrap.ts): these are no docs path, but 404s of their
    // own.
    await app().get('/Docs/README.md').expect(200, { passedOn: true });
    await app().get('/DOCS/?x=1').expect(200, { passedOn: true });
  });

  it('sends /docs/?query to the page without the slash, by a relative address that keeps the query', async () => {
    // Relative, so that it holds behind a proxy that serves the gateway under a prefix.
    await app().get('/docs/?x=1&y=2').expect(301).expect('Location', '../docs?x=1&y=2');
  });
});
