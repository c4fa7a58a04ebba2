/**
 * The soak's traffic mix (bench/soak.ts): which requests it sends, in which proportions, with
 * which statuses expected (bad input is sent on purpose), and how each one is timed.
 */
import { performance } from 'node:perf_hooks';
import { Agent, request } from 'undici';
import { HASHTAGS } from '../../src/devnet/vocabulary';

const REQUEST_TIMEOUT_MS = 30_000;

/**
 * Where requests come from: the clients' address, and another loopback address for the guesser
 * of keys. The service locks an address out after AUTH_FAILURE_LIMIT failed keys a minute, the
 * master key included (docs/decisions.md, "A locked-out address still serves the keys it was
 * using"): guesses sent from the operator's own address locked the soak's key administration
 * out with 429s.
 */
const CLIENTS = new Agent();
const GUESSER = new Agent({ localAddress: '127.0.0.2' });

/** Closes the connections the soak's requests keep alive. */
export async function closeTraffic(): Promise<void> {
  await Promise.all([CLIENTS.close(), GUESSER.close()]);
}

export const KEYWORDS = HASHTAGS.slice(0, 12).map(({ tag }) => tag);

export interface Plan {
  name: string;
  method: 'GET' | 'POST';
  path: string;
  body?: unknown;
  key: string;
  /** Statuses this request is meant to get (bad input is sent on purpose). */
  expected: number[];
  /** Sent from the guesser's address (127.0.0.2) rather than the clients'. */
  guess?: true;
}

export interface Context {
  url: string;
  masterKey: string;
  validatorKey: string;
  regularKey: string;
  /** Keys created by the `keys` route and not yet deactivated. */
  created: string[];
  labels: string[];
}

type Route = (context: Context, n: number) => Plan;

/** The mix: route and weight. */
const ROUTES: Array<[Route, number]> = [
  [(c) => get('health', '/api/v1/health', c.regularKey), 20],
  [
    (c, n) => ({
      name: 'on_demand',
      method: 'POST',
      path: '/api/v1/on_demand_data_request',
      key: c.validatorKey,
      body: { source: n % 3 === 0 ? 'reddit' : 'x', keywords: [pick(KEYWORDS, n)], limit: 50 },
      expected: [200],
    }),
    20,
  ],
  [(c, n) => get('top_labels', `/api/v1/get_top_labels_by_source/${src(n)}`, c.regularKey), 10],
  [(c, n) => get('ages', `/api/v1/ages?source=${src(n)}`, c.regularKey), 8],
  [
    (c, n) =>
      get(
        'bytes_by_label',
        `/api/v1/get_bytes_by_label?label=${encodeURIComponent(pick(c.labels, n))}`,
        c.regularKey,
      ),
    8,
  ],
  [(c, n) => get('query_bucket', `/api/v1/query_bucket/${src(n)}`, c.validatorKey), 4],
  [(c) => get('list_repo_names', '/api/v1/list_repo_names', c.regularKey), 4],
  [(c) => get('get_desirabilities', '/api/v1/get_desirabilities', c.regularKey), 6],
  [keysRoute, 12],
  [badRoute, 8],
];

function get(name: string, path: string, key: string): Plan {
  return { name, method: 'GET', path, key, expected: [200] };
}

const src = (n: number): string => (n % 2 === 0 ? 'x' : 'reddit');
const pick = <T>(values: readonly T[], n: number): T => values[n % values.length];

/** Key administration: create (then used once by `health`), list, deactivate. */
function keysRoute(context: Context, n: number): Plan {
  const step = n % 5;
  if (step === 4 && context.created.length > 0) {
    const key = context.created.shift()!;
    return {
      name: 'keys_deactivate',
      method: 'POST',
      path: `/api/v1/keys/${key}/deactivate`,
      key: context.masterKey,
      expected: [200],
    };
  }
  if (step === 3) return get('keys_list', '/api/v1/keys', context.masterKey);
  return {
    name: 'keys_create',
    method: 'POST',
    path: '/api/v1/keys',
    key: context.masterKey,
    body: { name: `soak-${n}` },
    expected: [200],
  };
}

/** Requests that must fail cleanly: bad source, bad key, wrong privilege, malformed body. */
function badRoute(context: Context, n: number): Plan {
  const cases: Plan[] = [
    {
      ...get('bad', '/api/v1/get_top_labels_by_source/tiktok', context.regularKey),
      expected: [422],
    },
    // After AUTH_FAILURE_LIMIT (20) failed keys a minute from one address: 429 (brute-force guard).
    { ...get('bad', '/api/v1/health', 'sk_live_not_a_key'), expected: [401, 429], guess: true },
    { ...get('bad', '/api/v1/keys', context.regularKey), expected: [403] },
    {
      name: 'bad',
      method: 'POST',
      path: '/api/v1/on_demand_data_request',
      key: context.validatorKey,
      body: { source: 'x', limit: 'many', unknown: [1, { deep: [] }] },
      expected: [422],
    },
    {
      ...get('bad', '/api/v1/query_bucket/x?start_bucket=soon', context.validatorKey),
      expected: [422],
    },
  ];
  return pick(cases, n);
}

export interface Sample {
  route: string;
  status: string;
  ms: number;
  unexpected: boolean;
  minute: number;
}

/**
 * The open-loop schedule at `rate` requests a second: how many requests are due `elapsed` ms
 * after the start, and the instant request `index` (0-based) falls due, in ms after the start.
 * Request n is due once n + 1 have elapsed at the rate: the first a whole interval in, so that
 * the rate holds from the first second on.
 */
export function dueCount(elapsedMs: number, rate: number): number {
  return Math.floor((elapsedMs / 1000) * rate);
}

export function dueAt(index: number, rate: number): number {
  return (1000 * (index + 1)) / rate;
}

/**
 * Sends `plan`, timed from `scheduled` (performance.now() of the instant the schedule made it
 * due): an open-loop test times from the schedule, so that the generator's own lateness (its
 * 5 ms tick, a busy event loop) counts as the wait a client of a slowed service would see.
 */
export async function send(
  context: Context,
  plan: Plan,
  minute: number,
  scheduled: number,
): Promise<Sample> {
  const started = scheduled;
  let status: string;
  try {
    const response = await request(`${context.url}${plan.path}`, {
      method: plan.method,
      headers: { 'X-API-Key': plan.key, 'Content-Type': 'application/json' },
      body: plan.body === undefined ? undefined : JSON.stringify(plan.body),
      signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
      dispatcher: plan.guess ? GUESSER : CLIENTS,
    });
    const body = await response.body.text();
    status = String(response.statusCode);
    if (plan.name === 'keys_create' && response.statusCode === 200)
      context.created.push((JSON.parse(body) as { key: string }).key);
  } catch (error) {
    status = `error:${(error as Error).name}`;
  }
  const ms = performance.now() - started;
  const unexpected = !plan.expected.includes(Number(status));
  return { route: plan.name, status, ms, unexpected, minute };
}

const TOTAL_WEIGHT = ROUTES.reduce((sum, [, weight]) => sum + weight, 0);

/**
 * The n-th request of the mix. A fixed, interleaved order (a golden-ratio walk over the weights)
 * rather than a random one, so that two runs send the same traffic.
 */
export function planAt(context: Context, n: number): Plan {
  let point = ((n * 0.6180339887) % 1) * TOTAL_WEIGHT;
  for (const [route, weight] of ROUTES) {
    if (point < weight) return route(context, n);
    point -= weight;
  }
  return ROUTES[0][0](context, n);
}
