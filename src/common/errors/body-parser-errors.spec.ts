import express from 'express';
import supertest from 'supertest';
import { jsonBodies } from '../http/json-bodies';
import { bodyParserErrorHandler } from './body-parser-errors';

/** The JSON parser and its error handler, as app.setup.ts installs them. */
function app() {
  const server = express();
  server.use(jsonBodies('1mb'));
  server.post('/', (_request, response) => {
    response.json({ read: true });
  });
  server.use(bodyParserErrorHandler);
  return supertest(server);
}

describe(bodyParserErrorHandler.name, () => {
  it('answers malformed JSON with a 422 json_invalid at the position the parser stopped, as FastAPI does', async () => {
    const refused = await app()
      .post('/')
      .set('Content-Type', 'application/json')
      .send('{"name": "team" "tier": 1}')
      .expect(422);
    expect(refused.body.detail).toEqual([
      {
        loc: ['body', 16],
        msg: 'JSON decode error',
        type: 'json_invalid',
        ctx: { error: expect.stringContaining('position 16') },
      },
    ]);
    expect(refused.body.request_id).toEqual(expect.any(String));
  });
});
