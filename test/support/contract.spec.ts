import { createServer, IncomingMessage, Server, ServerResponse } from 'node:http';
import { AddressInfo } from 'node:net';
import supertest from 'supertest';
import {
  ApiContract,
  checkedAgainst,
  checkedFetch,
  ContractViolation,
  outsideContract,
} from './contract';

/**
 * The harness that checks every e2e answer against the served OpenAPI document (./contract.ts)
 * is tested like the rest: a loopback server serves a minimal document and answers, per path,
 * what the document does or does not describe.
 */
const DOCUMENT = {
  openapi: '3.0.3',
  info: { title: 'contract harness test', version: '1' },
  paths: {
    '/things': {
      get: {
        responses: {
          '200': {
            description: 'the things',
            content: {
              'application/json': {
                schema: {
                  type: 'object',
                  required: ['count'],
                  properties: { count: { type: 'integer' } },
                },
              },
            },
          },
        },
      },
    },
  },
};

/** What the server answers for GET `path`: status and JSON body. */
const ANSWERS: Record<string, { status: number; body: unknown }> = {
  // Described by the document.
  '/things?good': { status: 200, body: { count: 3 } },
  // A status the operation does not document.
  '/things?undocumented-status': { status: 418, body: { count: 3 } },
  // A documented status whose body is off the schema.
  '/things?bad-body': { status: 200, body: { count: 'three' } },
  // A path no operation has, answering as if it had one.
  '/elsewhere': { status: 200, body: { count: 3 } },
};

function answer(request: IncomingMessage, response: ServerResponse): void {
  if (request.url === '/openapi.json') {
    response.writeHead(200, { 'content-type': 'application/json' });
    response.end(JSON.stringify(DOCUMENT));
    return;
  }
  const planned = ANSWERS[request.url ?? ''] ?? { status: 404, body: { detail: 'not found' } };
  response.writeHead(planned.status, { 'content-type': 'application/json' });
  response.end(JSON.stringify(planned.body));
}

describe('The OpenAPI contract check of e2e answers', () => {
  let server: Server;
  let url: string;
  let contract: ApiContract;
  let agent: supertest.Agent;

  beforeAll(async () => {
    server = createServer(answer);
    await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    contract = await ApiContract.load(url);
    agent = supertest.agent(url).use(checkedAgainst(contract));
  });

  afterAll(async () => {
    await new Promise<void>((done) => server.close(() => done()));
  });

  describe('through the supertest agent (checkedAgainst)', () => {
    it('lets a described answer through', async () => {
      const response = await agent.get('/things?good').expect(200);
      expect(response.body).toEqual({ count: 3 });
    });

    it('refuses a status the document does not describe', async () => {
      await expect(agent.get('/things?undocumented-status')).rejects.toThrow(ContractViolation);
      await expect(agent.get('/things?undocumented-status')).rejects.toThrow(
        /GET \/things answered 418.*\n.*status 418 is not documented/,
      );
    });

    it('refuses a body off the schema', async () => {
      await expect(agent.get('/things?bad-body')).rejects.toThrow(ContractViolation);
      await expect(agent.get('/things?bad-body')).rejects.toThrow(
        /body does not match the schema of 200/,
      );
    });

    it('refuses a 200 from a path no operation has', async () => {
      await expect(agent.get('/elsewhere')).rejects.toThrow(ContractViolation);
      await expect(agent.get('/elsewhere')).rejects.toThrow(
        /status 200 for a path no operation has \(want 404\)/,
      );
    });

    it('lets a 404 from a path no operation has through', async () => {
      await agent.get('/nowhere').expect(404);
    });

    it('lets an answer marked outsideContract(why) through', async () => {
      const response = await agent
        .get('/things?bad-body')
        .use(outsideContract('a deliberate probe'))
        .expect(200);
      expect(response.body).toEqual({ count: 'three' });
      await agent.get('/elsewhere').use(outsideContract('a deliberate probe')).expect(200);
    });

    it('wants a reason for opting out', () => {
      expect(() => outsideContract('  ')).toThrow('outsideContract needs a reason');
    });
  });

  describe('through checkedFetch', () => {
    it('lets a described answer through, its body readable again', async () => {
      const response = await checkedFetch(contract, `${url}/things?good`);
      expect(response.status).toBe(200);
      expect(await response.json()).toEqual({ count: 3 });
    });

    it('refuses a status the document does not describe', async () => {
      await expect(checkedFetch(contract, `${url}/things?undocumented-status`)).rejects.toThrow(
        ContractViolation,
      );
    });

    it('refuses a body off the schema', async () => {
      await expect(checkedFetch(contract, `${url}/things?bad-body`)).rejects.toThrow(
        /body does not match the schema of 200/,
      );
    });

    it('refuses a 200 from a path no operation has', async () => {
      await expect(checkedFetch(contract, `${url}/elsewhere`)).rejects.toThrow(
        /status 200 for a path no operation has/,
      );
    });
  });
});
