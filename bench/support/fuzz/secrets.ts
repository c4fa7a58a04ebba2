import { Agent } from 'node:http';
import fc from 'fast-check';
import { OpenApiDocument, readOperations } from '../openapi';
import { checkResponse } from './oracle';
import { RawRequest, send } from './send';
import { encode, Encoding, ENCODINGS, SecretName, SECRET_NAMES, Secrets } from './secret-forms';

/**
 * Plants the service's secrets in every place a client controls and sends the requests to a real
 * service; secret-forms.ts finds every trace of a secret in what comes back or what the service
 * wrote.
 */

type Position =
  | 'path'
  | 'queryValue'
  | 'queryName'
  | 'headerValue'
  | 'headerName'
  | 'authHeader'
  | 'jsonValue'
  | 'jsonKey'
  | 'malformedBody';
const POSITIONS: Position[] = [
  'path',
  'queryValue',
  'queryName',
  'headerValue',
  'headerName',
  'authHeader',
  'jsonValue',
  'jsonKey',
  'malformedBody',
];

export interface PlantedCase {
  secret: SecretName;
  encoding: Encoding;
  position: Position;
  request: RawRequest;
}

const HEADERS = [
  'User-Agent',
  'Referer',
  'X-Request-Id',
  'X-Forwarded-For',
  'Cookie',
  'Origin',
  'Accept',
  'X-Custom-Token',
];
const QUERY_NAMES = ['api_key', 'key', 'token', 'label', 'source', 'limit', 'state', 'hotkey'];
const AUTHS = ['master', 'issued', 'none', 'bogus'] as const;

/** A header name may hold only token characters: other encodings fall back to raw. */
const TOKEN_CHARS = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;

interface Route {
  method: string;
  template: string;
}

function plantedCase(secrets: Secrets, routes: Route[]): fc.Arbitrary<PlantedCase> {
  return fc
    .record({
      secret: fc.constantFrom(...SECRET_NAMES),
      encoding: fc.constantFrom(...ENCODINGS),
      position: fc.constantFrom(...POSITIONS),
      route: fc.constantFrom(...routes),
      auth: fc.constantFrom(...AUTHS),
      header: fc.constantFrom(...HEADERS),
      queryName: fc.constantFrom(...QUERY_NAMES),
      depth: fc.integer({ min: 0, max: 3 }),
      methodFlip: fc.boolean(),
    })
    .map((choice) => {
      const planted = encode(secrets[choice.secret], choice.encoding);
      const headers: Record<string, string> = {};
      if (choice.auth === 'master') headers['X-API-Key'] = secrets.master;
      if (choice.auth === 'issued') headers['X-API-Key'] = secrets.issued;
      if (choice.auth === 'bogus') headers['X-API-Key'] = 'sk_live_not_a_key';
      let path = fillTemplate(choice.route.template);
      let body: string | undefined;
      // JSON positions are sent with POST; others keep the route's method, sometimes flipped.
      let method = choice.methodFlip ? flip(choice.route.method) : choice.route.method;
      switch (choice.position) {
        case 'path': {
          const segments = path.split('/');
          const param = choice.route.template.split('/').findIndex((s) => s.startsWith('{'));
          if (param > 0) segments[param] = planted;
          else segments.push(planted);
          path = segments.join('/');
          break;
        }
        case 'queryValue':
          path += `?${choice.queryName}=${planted}&limit=5`;
          break;
        case 'queryName':
          path += `?${planted}=1`;
          break;
        case 'headerValue':
          headers[choice.header] = planted;
          break;
        case 'headerName':
          headers[`X-${TOKEN_CHARS.test(planted) ? planted : secrets[choice.secret]}`] = '1';
          break;
        case 'authHeader':
          // The secret where it belongs (or nearly): it must not be logged or echoed either.
          if (choice.depth === 0) headers['X-API-Key'] = planted;
          else if (choice.depth === 1) headers.Authorization = `Bearer ${planted}`;
          else
            headers.Authorization = `Basic ${Buffer.from(`user:${secrets[choice.secret]}`).toString('base64')}`;
          break;
        case 'jsonValue':
        case 'jsonKey':
          method = 'POST';
          body = JSON.stringify(nest(planted, choice.depth, choice.position === 'jsonKey'));
          headers['Content-Type'] = 'application/json';
          break;
        case 'malformedBody':
          method = 'POST';
          body = `{"desirabilities": [{"id": "${planted}", "weight": `;
          headers['Content-Type'] = 'application/json';
          break;
      }
      return {
        secret: choice.secret,
        encoding: choice.encoding,
        position: choice.position,
        request: { method, path, headers, body },
      };
    });
}

function fillTemplate(template: string): string {
  return template.replace(/\{source\}/g, 'x').replace(/\{[^}]+\}/g, 'some-id');
}

function flip(method: string): string {
  return method === 'GET' ? 'POST' : 'GET';
}

/** The planted text as a value (or a key) at some depth of an object shaped like real bodies. */
function nest(planted: string, depth: number, asKey: boolean): unknown {
  let value: unknown = asKey ? { [planted]: 1 } : planted;
  const shapes: ((inner: unknown) => unknown)[] = [
    (inner) => ({ source: 'x', keywords: [inner], limit: 5 }),
    (inner) => ({ desirabilities: [{ id: 'job', weight: 1, params: { label: inner } }] }),
    (inner) => ({ name: inner, tier: 'regular' }),
    (inner) => [inner],
  ];
  for (let level = 0; level <= depth; level++)
    value = shapes[(level + depth) % shapes.length](value);
  return value;
}

export interface SecretsResult {
  requests: number;
  planted: number;
  byPosition: Map<string, number>;
  statuses: Map<number, number>;
  /** Response bodies (with where they came from), for findLeaks. */
  bodies: { where: string; text: string }[];
  /** Requests without an answer, or answered off the OpenAPI document (none expected). */
  offDocument: { where: string; problems: string[] }[];
}

/** Sends `numRuns` planted requests (4 at a time) and collects the answers. */
export async function runSecretsCampaign(
  baseUrl: string,
  secrets: Secrets,
  options: { numRuns: number; seed: number },
): Promise<SecretsResult> {
  const document = (await (await fetch(`${baseUrl}/openapi.json`)).json()) as OpenApiDocument;
  const operations = readOperations(document);
  const routes: Route[] = operations.map(({ method, template }) => ({
    method,
    template,
  }));
  routes.push({ method: 'GET', template: '/api/v1/{unknown}' }, { method: 'GET', template: '/' });
  const cases = fc.sample(plantedCase(secrets, routes), {
    numRuns: options.numRuns,
    seed: options.seed,
  });
  const agent = new Agent({ keepAlive: true, maxSockets: 4 });
  const result: SecretsResult = {
    requests: 0,
    planted: 0,
    byPosition: new Map(),
    statuses: new Map(),
    bodies: [],
    offDocument: [],
  };
  try {
    let next = 0;
    const worker = async () => {
      while (next < cases.length) {
        const planted = cases[next++];
        const where = `response to ${planted.request.method} ${planted.request.path.slice(0, 80)} (${planted.position}, ${planted.encoding})`;
        result.requests += 1;
        result.planted += 1;
        result.byPosition.set(planted.position, (result.byPosition.get(planted.position) ?? 0) + 1);
        let status = 0;
        let problems: string[];
        try {
          const response = await send(baseUrl, planted.request, agent, 20_000);
          status = response.status;
          result.bodies.push({ where, text: response.body.toString('utf8') });
          problems = checkResponse(operations, planted.request, response);
        } catch (error) {
          problems = [`no answer: ${(error as Error).message}`];
        }
        result.statuses.set(status, (result.statuses.get(status) ?? 0) + 1);
        if (problems.length > 0) result.offDocument.push({ where, problems });
      }
    };
    await Promise.all([worker(), worker(), worker(), worker()]);
  } finally {
    agent.destroy();
  }
  return result;
}
