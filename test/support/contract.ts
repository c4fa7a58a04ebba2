import supertest from 'supertest';
import {
  Answer,
  matchOperation,
  OpenApiDocument,
  Operation,
  readOperations,
  responseProblems,
  unroutedProblems,
  allowedMethods,
} from '../../bench/support/openapi';

/**
 * Every answer an e2e test receives through the harness (`app.http`, `checkedFetch`) is checked
 * against the OpenAPI document the app serves, so the document cannot drift from behaviour
 * (docs/decisions.md, "Validating every e2e answer").
 */

/** Served, but not API operations: answers here are not checked, for the reason given. */
const OUTSIDE_THE_DOCUMENT: readonly { path: RegExp; why: string }[] = [
  { path: /^\/openapi\.json$/, why: 'the document itself' },
  { path: /^\/docs(\/.*)?$/, why: 'the Swagger UI page and its assets (HTML, JS, CSS)' },
  { path: /^\/$/, why: 'the pointer to the two above, for whoever opens the bare address' },
];

/** Why a test opted out, set by `outsideContract` on one request. */
const OPT_OUT = Symbol('outsideContract');

export class ContractViolation extends Error {
  override name = 'ContractViolation';
}

export class ApiContract {
  private static readonly compiled = new Map<string, Operation[]>();

  private constructor(private readonly operations: Operation[]) {}

  /** The contract of the app at `baseUrl`: its `/openapi.json`, compiled once per document. */
  static async load(baseUrl: string): Promise<ApiContract> {
    const response = await fetch(`${baseUrl}/openapi.json`, {
      signal: AbortSignal.timeout(10_000),
    });
    if (response.status !== 200) throw new Error(`${baseUrl}/openapi.json: ${response.status}`);
    const text = await response.text();
    let operations = ApiContract.compiled.get(text);
    if (!operations) {
      operations = readOperations(JSON.parse(text) as OpenApiDocument);
      ApiContract.compiled.set(text, operations);
    }
    return new ApiContract(operations);
  }

  /** Throws a ContractViolation naming the operation, the status and what does not match. */
  check(url: string, answer: Answer): void {
    const { pathname, search } = new URL(url);
    if (OUTSIDE_THE_DOCUMENT.some(({ path }) => path.test(pathname))) return;
    const operation = matchOperation(this.operations, answer.method, pathname);
    // A request no operation has (a deliberate probe) must answer as such: 404 (405 for a
    // known path), or a refusal that comes before routing.
    const problems = operation
      ? responseProblems(operation, answer)
      : unroutedProblems(answer, allowedMethods(this.operations, pathname));
    if (problems.length === 0) return;
    const name = operation?.name ?? `${answer.method} ${pathname} (no operation)`;
    throw new ContractViolation(
      [
        `${name} answered ${answer.status}, which the OpenAPI document does not describe:`,
        ...problems.map((problem) => `  - ${problem}`),
        `  request: ${answer.method} ${pathname}${search}`,
        `  body: ${JSON.stringify(answer.body)?.slice(0, 500) ?? '(not JSON)'}`,
        'Fix the document or the behaviour; a test that deliberately sends what the document ' +
          'cannot describe may opt out with outsideContract(reason).',
      ].join('\n'),
    );
  }
}

/**
 * A supertest plugin (`agent.use(...)`): every request of the agent is checked after the
 * test's own expectations, so a wrong status reads as the test's failure first.
 */
export function checkedAgainst(contract: ApiContract): (request: supertest.Test) => void {
  return (test) => {
    const end = test.end.bind(test);
    let added = false;
    test.end = (callback) => {
      if (!added) {
        added = true;
        test.expect((response: supertest.Response) => {
          if ((test as OptedOut)[OPT_OUT] === undefined)
            contract.check(test.url, supertestAnswer(test.method, response));
        });
      }
      return end(callback);
    };
  };
}

/**
 * Opts one supertest request out of the check (`.use(outsideContract('why'))`): only for a
 * request that deliberately sends what the document cannot describe. Say why.
 */
export function outsideContract(why: string): (request: supertest.Test) => void {
  if (why.trim() === '') throw new Error('outsideContract needs a reason');
  return (test) => {
    (test as OptedOut)[OPT_OUT] = why;
  };
}

/** fetch, with the answer checked against `contract`; the body is read and can be read again. */
export async function checkedFetch(
  contract: ApiContract,
  input: string | Request,
  init?: RequestInit,
): Promise<Response> {
  const request = new Request(input, init);
  const response = await fetch(request);
  const bytes = Buffer.from(await response.arrayBuffer());
  contract.check(request.url, fetchAnswer(request.method, response, bytes));
  const nullBody = bytes.length === 0 || [204, 205, 304].includes(response.status);
  return new Response(nullBody ? null : bytes, {
    status: response.status,
    statusText: response.statusText,
    headers: response.headers,
  });
}

/** Checks a fetch Response (one openapi-fetch received, say); reads a clone of its body. */
export async function checkFetchResponse(
  contract: ApiContract,
  request: Request,
  response: Response,
): Promise<void> {
  const bytes = Buffer.from(await response.clone().arrayBuffer());
  contract.check(request.url, fetchAnswer(request.method, response, bytes));
}

function fetchAnswer(method: string, response: Response, bytes: Buffer): Answer {
  const headers: Record<string, string> = {};
  response.headers.forEach((value, name) => (headers[name] = value));
  const body = jsonBody(headers['content-type'], bytes);
  return { method, status: response.status, headers, body };
}

type OptedOut = supertest.Test & { [OPT_OUT]?: string };

function supertestAnswer(method: string, response: supertest.Response): Answer {
  const type = response.headers['content-type'] as string | undefined;
  // supertest parses JSON into `body`; a test with its own parser may leave the raw bytes.
  const raw: unknown = response.body;
  const body =
    Buffer.isBuffer(raw) || typeof raw === 'string'
      ? jsonBody(type, Buffer.from(raw))
      : isJsonType(type)
        ? raw
        : undefined;
  return { method, status: response.status, headers: response.headers, body };
}

function jsonBody(type: string | undefined, bytes: Buffer): unknown {
  if (!isJsonType(type) || bytes.length === 0) return undefined;
  try {
    return JSON.parse(bytes.toString('utf8')) as unknown;
  } catch {
    return bytes.toString('utf8');
  }
}

function isJsonType(type: string | undefined): boolean {
  return /^application\/([\w.-]+\+)?json\b/i.test(type ?? '');
}
