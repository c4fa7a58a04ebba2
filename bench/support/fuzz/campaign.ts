import { Agent } from 'node:http';
import { performance } from 'node:perf_hooks';
import fc from 'fast-check';
import { checkResponse } from './oracle';
import { OpenApiDocument, Operation, readOperations } from '../openapi';
import { FuzzContext, keyHeaderValue } from './headers';
import { FuzzCase, fuzzCase } from './requests';
import { RawRequest, send } from './send';
import { RATE_LIMIT_MAX } from '../../../src/common/throttling/rate-limit-settings';

/** Environment for the app under fuzz: budgets no fuzz run can exhaust, so answers stay varied. */
export const FUZZ_APP_ENV = {
  RATE_LIMIT_REGULAR: String(RATE_LIMIT_MAX),
  RATE_LIMIT_VALIDATOR: String(RATE_LIMIT_MAX),
  AUTH_FAILURE_LIMIT: '1000000000',
  // On-demand queries answer within this even when miners dawdle: well under the timeout below.
  QUERY_DEADLINE_MS: '3000',
} as const;

/** A request still unanswered after this is reported as a hang. */
export const REQUEST_TIMEOUT_MS = 20_000;

/** Bodies over this may be cut off unread (see `check`). */
const LARGE_BODY_BYTES = 64 * 1024;

export interface FuzzFailure {
  index: number;
  request: string;
  problems: string[];
}

export interface FuzzResult {
  cases: number;
  perTarget: Map<string, number>;
  /** Status (or `error` for no answer) → count. */
  statuses: Map<string, number>;
  failures: FuzzFailure[];
  seconds: number;
  /** fast-check's report (seed, path to replay) when a case failed in `assert` mode. */
  report?: string;
}

export interface FuzzRunOptions {
  numRuns: number;
  seed: number;
  /** `assert`: stop and shrink at the first failing case (tests). `collect`: run every case. */
  mode: 'assert' | 'collect';
}

/**
 * A fuzz campaign against one running app: reads its /openapi.json, makes the keys and rows
 * the generators point at, then sends fast-check's requests one at a time and checks each.
 */
export class FuzzCampaign {
  // A connection per request: a reused one may be closed by the server as we write (a race
  // that would read as a finding).
  private readonly agent = new Agent({ keepAlive: false });

  private constructor(
    private readonly baseUrl: string,
    private readonly document: OpenApiDocument,
    readonly operations: Operation[],
    readonly context: FuzzContext,
  ) {}

  static async prepare(baseUrl: string, masterKey: string): Promise<FuzzCampaign> {
    const document = (await (await fetch(`${baseUrl}/openapi.json`)).json()) as OpenApiDocument;
    const post = async (path: string, key: string, body?: unknown) => {
      const response = await fetch(`${baseUrl}${path}`, {
        method: 'POST',
        headers: { 'X-API-Key': key, 'Content-Type': 'application/json' },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      if (response.status !== 200) throw new Error(`${path}: ${response.status}`);
      return (await response.json()) as Record<string, string>;
    };
    const createKey = (name: string, tier: string) =>
      post('/api/v1/keys', masterKey, { name, tier });
    const regular = await createKey('fuzz regular', 'regular');
    const validator = await createKey('fuzz validator', 'validator');
    const deactivated = await createKey('fuzz deactivated', 'regular');
    await post(`/api/v1/keys/${deactivated.id}/deactivate`, masterKey);
    // Keys the fuzzer may deactivate by key or id: the ones it authenticates with stay active.
    const victims = await Promise.all(
      [1, 2, 3].map((n) => createKey(`fuzz victim ${n}`, 'regular')),
    );
    await post('/api/v1/set_desirabilities', validator.key, {
      desirabilities: [
        { id: 'fuzz-task', weight: 1, params: { platform: 'x', label: '#bitcoin' } },
        { source_name: 'reddit', label_weights: { 'r/bitcoin': 1 } },
      ],
    });
    const context: FuzzContext = {
      keys: {
        master: masterKey,
        regular: regular.key,
        validator: validator.key,
        deactivated: deactivated.key,
      },
      knownIds: ['fuzz-task', victims[0].key, victims[1].id, victims[2].key, deactivated.id],
    };
    return new FuzzCampaign(baseUrl, document, readOperations(document), context);
  }

  arbitrary(): fc.Arbitrary<FuzzCase> {
    return fuzzCase(this.document, this.operations, this.context);
  }

  async run(options: FuzzRunOptions): Promise<FuzzResult> {
    const result: FuzzResult = {
      cases: 0,
      perTarget: new Map(),
      statuses: new Map(),
      failures: [],
      seconds: 0,
    };
    const started = performance.now();
    const count = (map: Map<string, number>, key: string) => map.set(key, (map.get(key) ?? 0) + 1);
    const property = fc.asyncProperty(this.arbitrary(), async (fuzz) => {
      const index = result.cases++;
      count(result.perTarget, fuzz.target);
      const sent = performance.now();
      const { status, problems } = await this.check(fuzz);
      if (process.env.FUZZ_TRACE)
        process.stderr.write(
          `${index} ${status} ${(performance.now() - sent).toFixed(0)}ms ${describe(fuzz).slice(0, 300)}\n`,
        );
      count(result.statuses, status);
      if (problems.length === 0) return true;
      result.failures.push({ index, request: describe(fuzz), problems });
      return options.mode === 'collect';
    });
    const details = await fc.check(property, { numRuns: options.numRuns, seed: options.seed });
    result.seconds = (performance.now() - started) / 1000;
    if (details.failed) result.report = fc.defaultReportMessage(details);
    return result;
  }

  /** Sends one case and returns its status and what the oracle found wrong. */
  async check(fuzz: FuzzCase): Promise<{ status: string; problems: string[] }> {
    const key = keyHeaderValue(fuzz.key, this.context);
    const request: RawRequest = {
      method: fuzz.method,
      path: fuzz.path,
      headers: key === undefined ? fuzz.headers : { ...fuzz.headers, 'x-api-key': key },
      body: fuzz.body,
    };
    try {
      const response = await send(this.baseUrl, request, this.agent, REQUEST_TIMEOUT_MS);
      return {
        status: String(response.status),
        problems: checkResponse(this.operations, request, response),
      };
    } catch (error) {
      // A large body the server need not read (a GET's, or after a refusal) may be cut off
      // with the connection once the answer is sent: Node does not drain big bodies. The
      // write then fails before the answer is read. Whether the service survived is checked
      // by the next requests.
      const code = (error as { code?: string }).code;
      const large = Buffer.byteLength(fuzz.body ?? '') > LARGE_BODY_BYTES;
      if (large && (code === 'EPIPE' || code === 'ECONNRESET'))
        return { status: 'reset', problems: [] };
      return { status: 'error', problems: [`no response: ${String(error)}`] };
    }
  }

  close(): void {
    this.agent.destroy();
  }
}

/** A failing request in one line, long values cut (keys are the fuzz app's own test keys). */
export function describe(fuzz: FuzzCase): string {
  const cut = (text: string) =>
    text.length > 200 ? `${text.slice(0, 200)}…(${text.length})` : text;
  const body = fuzz.body === undefined ? '' : ` body ${cut(fuzz.body)}`;
  return `${fuzz.method} ${cut(fuzz.path)} key ${JSON.stringify(fuzz.key).slice(0, 120)} headers ${cut(JSON.stringify(fuzz.headers))}${body}`;
}
