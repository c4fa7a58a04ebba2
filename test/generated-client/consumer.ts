// What a client of the gateway writes, with types generated from its OpenAPI document:
//
//   npx openapi-typescript http://localhost:8000/openapi.json -o api.d.ts
//
// generated-client.e2e-spec.ts generates ./api.d.ts from the served document at test time,
// type-checks this file against it with tsc and runs it against a real app: every operation of
// the document, once. Not part of the project's own tsc program (./api.d.ts exists only there).
import createClient, { type Middleware } from 'openapi-fetch';
import type { components, paths } from './api';

export type Gateway = ReturnType<typeof gatewayClient>;
export type OnDemandItem = NonNullable<components['schemas']['DataQueryResponse']['data']>[number];

/** A typed client; `middleware` (logging, retries, metrics…) sees every request and response. */
export function gatewayClient(baseUrl: string, apiKey: string, middleware: Middleware[] = []) {
  const client = createClient<paths>({ baseUrl, headers: { 'X-API-Key': apiKey } });
  client.use(...middleware);
  return client;
}

/** A failed call, with the documented body it answered (`{"detail": ...}` for errors). */
function failure(operation: string, status: number, body: unknown): Error {
  return new Error(`${operation}: ${status} ${JSON.stringify(body)}`);
}

/** One line about an item, whichever network it came from. */
export function describeItem(item: OnDemandItem): string {
  // `source` discriminates the item types: each branch sees its own typed fields.
  const about =
    item.source === 'X'
      ? `${item.tweet.hashtags.join(' ')} (${item.text.length} chars, ${item.media?.length ?? 0} media)`
      : `${item.communityName} (score ${item.score ?? '?'})`;
  return `${item.datetime} ${item.source} ${item.uri} ${about} ${item.content_size_bytes ?? '?'} bytes`;
}

export interface Tour {
  createdKey: string;
  keysListed: number;
  keyLimit: number | null;
  keyUsage: { limit: number; used: number; remaining: number; rate_limited: boolean };
  health: string;
  systemStatus: string;
  miners: number;
  xItems: string[];
  redditItems: string[];
  tasksRegistered: string[];
  desirabilities: number;
  publication: string;
  aggregateSource: string;
  repoNames: number;
  topLabels: number;
  ages: number;
  bitcoinBytes: number;
  bucketStatus: string;
  tasks: number;
  datasetBytes: number;
  parquetBytes: number;
  recompileRefused: string;
  metricsLines: number;
  deactivated: string;
}

/**
 * Every operation once, as a team adopting the gateway would try it: with the master key, make
 * a validator key, query the network, vote on desirabilities, read statistics and tasks,
 * download a completed task's dataset, ask to recompile it (refused: it has not failed), scrape
 * metrics, see what the key has spent, and retire it.
 */
export async function tour(
  baseUrl: string,
  masterKey: string,
  completedTaskId: string,
  middleware: Middleware[] = [],
): Promise<Tour> {
  const admin = gatewayClient(baseUrl, masterKey, middleware);

  const created = await admin.POST('/api/v1/keys', {
    body: { name: 'analytics team', tier: 'validator' },
  });
  if (created.error) throw failure('create key', created.response.status, created.error);
  const key = created.data;
  const listed = await admin.GET('/api/v1/keys');
  if (listed.error) throw failure('list keys', listed.response.status, listed.error);

  const updated = await admin.PATCH('/api/v1/keys/{id}', {
    params: { path: { id: key.id } },
    body: { rate_limit: 500, expires_at: '2100-01-01T00:00:00Z' },
  });
  if (updated.error) throw failure('update key', updated.response.status, updated.error);

  const gateway = gatewayClient(baseUrl, key.key, middleware);
  const health = await gateway.GET('/api/v1/health');
  if (health.error) throw failure('health', health.response.status, health.error);
  const status = await admin.GET('/api/v1/monitoring/system-status');
  if (status.error) throw failure('system status', status.response.status, status.error);
  const miners = await admin.GET('/api/v1/miners', { params: { query: { state: 'active' } } });
  if (miners.error) throw failure('miners', miners.response.status, miners.error);

  const x = await gateway.POST('/api/v1/on_demand_data_request', {
    body: { source: 'x', keywords: ['#bitcoin', '#ai'], keyword_mode: 'any', limit: 20 },
  });
  if (x.error) throw failure('query X', x.response.status, x.error);
  const reddit = await gateway.POST('/api/v1/on_demand_data_request', {
    body: { source: 'reddit', limit: 20 },
  });
  if (reddit.error) throw failure('query Reddit', reddit.response.status, reddit.error);

  const voted = await gateway.POST('/api/v1/set_desirabilities', {
    body: {
      desirabilities: [
        { id: 'team-bitcoin', weight: 1, params: { platform: 'x', label: '#bitcoin' } },
      ],
    },
  });
  if (voted.error) throw failure('vote', voted.response.status, voted.error);
  const votes = await gateway.GET('/api/v1/get_desirabilities');
  if (votes.error) throw failure('votes', votes.response.status, votes.error);
  const publication = await gateway.GET('/api/v1/desirabilities/publication');
  if (publication.error)
    throw failure('publication', publication.response.status, publication.error);
  const aggregateSource = await gateway.GET('/api/v1/desirabilities/network');
  if (aggregateSource.error)
    throw failure('aggregate source', aggregateSource.response.status, aggregateSource.error);

  const repos = await gateway.GET('/api/v1/list_repo_names');
  if (repos.error) throw failure('repo names', repos.response.status, repos.error);
  const top = await gateway.GET('/api/v1/get_top_labels_by_source/{source}', {
    params: { path: { source: 'x' } },
  });
  if (top.error) throw failure('top labels', top.response.status, top.error);
  const ages = await gateway.GET('/api/v1/ages', { params: { query: { source: 'x' } } });
  if (ages.error) throw failure('ages', ages.response.status, ages.error);
  const bytes = await gateway.GET('/api/v1/get_bytes_by_label', {
    params: { query: { label: '#bitcoin' } },
  });
  if (bytes.error) throw failure('bytes by label', bytes.response.status, bytes.error);
  const bucket = await gateway.GET('/api/v1/query_bucket/{source}', {
    params: { path: { source: 'x' }, query: { label: '#bitcoin' } },
  });
  if (bucket.error) throw failure('query bucket', bucket.response.status, bucket.error);

  const tasks = await gateway.GET('/api/v1/tasks', { params: { query: { state: 'completed' } } });
  if (tasks.error) throw failure('tasks', tasks.response.status, tasks.error);
  const task = await gateway.GET('/api/v1/tasks/{id}', {
    params: { path: { id: completedTaskId } },
  });
  if (task.error) throw failure('task', task.response.status, task.error);
  const dataset = await gateway.GET('/api/v1/tasks/{id}/dataset', {
    params: { path: { id: task.data.id } },
    parseAs: 'arrayBuffer',
  });
  if (dataset.error) throw failure('dataset', dataset.response.status, dataset.error);
  const parquet = await gateway.GET('/api/v1/tasks/{id}/dataset', {
    params: { path: { id: task.data.id }, query: { format: 'parquet' } },
    parseAs: 'arrayBuffer',
  });
  if (parquet.error) throw failure('Parquet dataset', parquet.response.status, parquet.error);
  // Only a failed task goes back to compiling: a completed one is a 409 naming its state.
  const recompiled = await admin.POST('/api/v1/tasks/{id}/recompile', {
    params: { path: { id: task.data.id } },
  });
  if (recompiled.response.status !== 409 || !recompiled.error)
    throw failure('recompile', recompiled.response.status, recompiled.data);

  const metrics = await admin.GET('/metrics', { parseAs: 'text' });
  if (metrics.error) throw failure('metrics', metrics.response.status, metrics.error);

  // What the key has spent of its budget, read without spending more.
  const shown = await admin.GET('/api/v1/keys/{id}', { params: { path: { id: key.id } } });
  if (shown.error) throw failure('get key', shown.response.status, shown.error);

  const retired = await admin.POST('/api/v1/keys/{key}/deactivate', {
    params: { path: { key: key.id } },
  });
  if (retired.error) throw failure('deactivate', retired.response.status, retired.error);

  return {
    createdKey: key.key,
    keysListed: listed.data.keys.length,
    keyLimit: updated.data.rate_limit,
    keyUsage: shown.data.usage,
    health: health.data.status,
    systemStatus: status.data.status,
    miners: miners.data.miners.length,
    xItems: x.data.data?.map(describeItem) ?? [],
    redditItems: reddit.data.data?.map(describeItem) ?? [],
    tasksRegistered: voted.data.tasks,
    desirabilities: votes.data.length,
    publication: publication.data.state,
    aggregateSource: aggregateSource.data.source,
    repoNames: repos.data.count,
    topLabels: top.data.length,
    ages: ages.data.length,
    bitcoinBytes: bytes.data.total_bytes,
    bucketStatus: bucket.data.status,
    tasks: tasks.data.tasks.length,
    datasetBytes: dataset.data.byteLength,
    parquetBytes: parquet.data.byteLength,
    recompileRefused: JSON.stringify(recompiled.error.detail),
    metricsLines: metrics.data.split('\n').length,
    deactivated: retired.data.status,
  };
}
