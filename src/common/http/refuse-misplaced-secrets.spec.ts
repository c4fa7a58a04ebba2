import { Logger } from '@nestjs/common';
import express from 'express';
import supertest from 'supertest';
import { until } from '../../../test/support/until';
import { ERROR_DETAILS } from '../errors/error-details';
import { secretScannerFor } from '../security/secrets';
import { jsonBodies } from './json-bodies';
import { refuseMisplacedKeys } from './refuse-misplaced-secrets';

const MASTER_KEY = 'master-key-misplaced-0123456789';
const ISSUED_KEY = `sk_live_${'Q'.repeat(43)}`;

/** An app that answers 200 to whatever the check lets through, behind the JSON parser. */
function app(logIntervalMs?: number) {
  const server = express();
  server.use(jsonBodies('1mb'));
  server.use(refuseMisplacedKeys(secretScannerFor({ masterKey: MASTER_KEY }), logIntervalMs));
  server.use((_request, response) => {
    response.json({ passed: true });
  });
  return supertest(server);
}

describe(refuseMisplacedKeys.name, () => {
  let warned: jest.SpyInstance;
  beforeAll(
    () => (warned = jest.spyOn(Logger.prototype, 'warn').mockImplementation(() => undefined)),
  );
  beforeEach(() => warned.mockClear());
  afterAll(() => jest.restoreAllMocks());

  it.each([
    ['the query string', `/api/v1/health?api_key=${ISSUED_KEY}`],
    ['the query string, percent-encoded', `/api/v1/health?k=${encodeURIComponent(ISSUED_KEY)}`],
    ['the path', `/api/v1/tasks/${ISSUED_KEY}`],
  ])('refuses an issued key in %s with a 400, before the request goes on', async (_, url) => {
    const refused = await app().get(url).expect(400);
    expect(refused.body).toMatchObject({ detail: ERROR_DETAILS.misplacedSecret });
  });

  // An attacker audit: a 1 MB body of escapes cost some 180 ms to scan in every encoding, and
  // anyone could send it, keyless, to stall every other request. Bodies are looked at once a
  // key is admitted and charged (MisplacedSecretGuard); nothing reads or logs them before.
  it('lets an issued key in a JSON body through, for MisplacedSecretGuard to refuse', async () => {
    await app()
      .post('/api/v1/keys')
      .send({ name: `team ${ISSUED_KEY}` })
      .expect(200);
  });

  // Found here, before authentication, a known secret's 400 told anyone a guess was right: it is
  // MisplacedSecretGuard's, once a key is admitted.
  it('lets the master key through, in the query, the path or the body', async () => {
    await app()
      .get(`/api/v1/health?k=${encodeURIComponent(MASTER_KEY)}`)
      .expect(200);
    await app().get(`/api/v1/tasks/${MASTER_KEY}`).expect(200);
    await app()
      .post('/api/v1/keys')
      .send({ name: `team ${MASTER_KEY}` })
      .expect(200);
  });

  it('lets through the key to deactivate in its path, and a request without secrets', async () => {
    await app().post(`/api/v1/keys/${ISSUED_KEY}/deactivate`).expect(200);
    await app().get('/api/v1/health?source=reddit').expect(200);
  });

  // Before authentication, anyone can send them: a warning each let a flood fill the log.
  it('warns of the first refusal at once, then of the rest in one line per interval, with their count', async () => {
    const refusing = app(2000);
    for (let i = 0; i < 20; i++)
      await refusing.get(`/api/v1/health?api_key=${ISSUED_KEY}&n=${i}`).expect(400);
    expect(warned.mock.calls).toEqual([
      [expect.stringMatching(/^GET \/api\/v1\/health\?api_key=\[redacted\]&n=0 400: refused/)],
    ]);
    await until(() => Promise.resolve(warned.mock.calls.length === 2 || undefined), 5000, 20);
    expect(warned.mock.calls[1]).toEqual([
      { count: 19 },
      expect.stringMatching(
        /^19 more requests refused in 2 s for a secret outside the X-API-Key and Authorization headers; the last: GET \/api\/v1\/health\?api_key=\[redacted\]&n=19$/,
      ),
    ]);
  });
});
