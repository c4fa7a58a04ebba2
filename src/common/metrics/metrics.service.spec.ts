import { Logger } from '@nestjs/common';
import { sample } from '../../../test/support/prometheus-text';
import { MetricsService } from './metrics.service';

/** One sample of a fresh scrape, found by name and exactly these labels. */
async function valueOf(
  metrics: MetricsService,
  name: string,
  labels: Record<string, string> = {},
): Promise<number | undefined> {
  return sample(await metrics.scrape(), name, labels);
}

describe(MetricsService.name, () => {
  let metrics: MetricsService;
  beforeEach(() => (metrics = new MetricsService()));

  // The README's metrics table, as Prometheus reads it: an alert or a dashboard written from it
  // must find each series under that name, of that type (rate() on a gauge is silently wrong).
  it('has the documented names and types', async () => {
    const documented = {
      gateway_http_requests_total: 'counter',
      gateway_http_request_duration_seconds: 'histogram',
      gateway_http_requests_unanswered_total: 'counter',
      gateway_rate_limit_rejections_total: 'counter',
      gateway_miner_call_duration_seconds: 'histogram',
      gateway_miner_call_failures_total: 'counter',
      gateway_quorum_outcomes_total: 'counter',
      gateway_on_demand_answers_total: 'counter',
      gateway_index_sync_duration_seconds: 'histogram',
      gateway_index_sync_rows_total: 'counter',
      gateway_index_sync_miners_total: 'counter',
      gateway_index_sync_last_completed_timestamp_seconds: 'gauge',
      gateway_desirability_publication_attempts_total: 'counter',
      gateway_desirability_publication_failures_total: 'counter',
      gateway_task_compile_failures_total: 'counter',
      gateway_task_collections_total: 'counter',
      gateway_job_failures_total: 'counter',
      gateway_miner_items_dropped_total: 'counter',
      gateway_miner_answers_dropped_total: 'counter',
      gateway_auth_failures_total: 'counter',
    };
    const text = await metrics.scrape();
    const types = Object.fromEntries(
      [...text.matchAll(/^# TYPE (\S+) (\w+)$/gm)].map(([, name, type]) => [name, type]),
    );
    expect(types).toEqual(documented);
  });

  it('counts 401s by reason, each reason at 0 from the start', async () => {
    metrics.recordAuthFailure('wrong_key');
    metrics.recordAuthFailure('wrong_key');
    const failures = (reason: string) =>
      valueOf(metrics, 'gateway_auth_failures_total', { reason });
    expect(await failures('wrong_key')).toBe(2);
    for (const reason of ['missing_key', 'deactivated_key', 'expired_key', 'wrong_metrics_token'])
      expect(await failures(reason)).toBe(0);
  });

  it('counts an answered request by method, route and status, and times it in seconds', async () => {
    metrics.observeRequest('GET', '/api/v1/tasks/:id', 404, 0.2);
    const series = { method: 'GET', route: '/api/v1/tasks/:id', status: '404' };
    expect(await valueOf(metrics, 'gateway_http_requests_total', series)).toBe(1);
    expect(await valueOf(metrics, 'gateway_http_request_duration_seconds_sum', series)).toBe(0.2);
    const bucket = (le: string) =>
      valueOf(metrics, 'gateway_http_request_duration_seconds_bucket', { ...series, le });
    expect(await bucket('0.1')).toBe(0);
    expect(await bucket('0.25')).toBe(1);
  });

  it('counts a request whose client left apart from the answered ones', async () => {
    metrics.recordUnansweredRequest('POST', 'unmatched');
    const text = await metrics.scrape();
    expect(
      sample(text, 'gateway_http_requests_unanswered_total', {
        method: 'POST',
        route: 'unmatched',
      }),
    ).toBe(1);
    expect(text).not.toMatch(/^gateway_http_requests_total\{/m);
  });

  // Each histogram reaches the longest wait of its kind, which would otherwise fall in +Inf
  // only: an on-demand query's 10 s deadline, a bucket call's 140 s timeout, an hour-long sync.
  it('has buckets up to the longest wait it measures', async () => {
    metrics.observeRequest('POST', '/api/v1/on_demand_data_request', 200, 9);
    metrics.observeMinerCall(3, 'GetDataEntityBucket', 140);
    metrics.observeIndexSync({
      seconds: 1800,
      rows: 0,
      synced: 0,
      rejected: 0,
      failed: 0,
      skipped: 0,
    });
    const request = { method: 'POST', route: '/api/v1/on_demand_data_request', status: '200' };
    const minerCall = { endpoint: 'GetDataEntityBucket' };
    const bucket = (name: string, labels: Record<string, string>, le: string) =>
      valueOf(metrics, `${name}_bucket`, { ...labels, le });
    for (const [name, labels, under, over] of [
      ['gateway_http_request_duration_seconds', request, '5', '10'],
      ['gateway_miner_call_duration_seconds', minerCall, '60', '150'],
      ['gateway_index_sync_duration_seconds', {}, '1200', '3600'],
    ] as const) {
      expect([name, await bucket(name, labels, under)]).toEqual([name, 0]);
      expect([name, await bucket(name, labels, over)]).toEqual([name, 1]);
    }
  });

  it('counts a 429 under the key class it was given', async () => {
    for (const keyClass of ['regular', 'validator', 'master', 'unauthenticated'] as const)
      metrics.recordRateLimitRejection(keyClass);
    metrics.recordRateLimitRejection('master');
    const rejections = (keyClass: string) =>
      valueOf(metrics, 'gateway_rate_limit_rejections_total', { key_class: keyClass });
    expect(await rejections('master')).toBe(2);
    for (const keyClass of ['regular', 'validator', 'unauthenticated'])
      expect(await rejections(keyClass)).toBe(1);
  });

  it('times a miner call by synapse and counts its failure by miner and reason, but no time for a call never made', async () => {
    metrics.observeMinerCall(7, 'GetMinerIndex', 1.5, 'wrong_schema');
    metrics.observeMinerCall(8, 'OnDemandRequest', undefined, 'busy');
    metrics.observeMinerCall(9, 'OnDemandRequest', 0.3);
    const text = await metrics.scrape();
    const calls = (endpoint: string) =>
      sample(text, 'gateway_miner_call_duration_seconds_count', { endpoint });
    const failures = (miner: string, endpoint: string, reason: string) =>
      sample(text, 'gateway_miner_call_failures_total', { miner, endpoint, reason });
    expect(calls('GetMinerIndex')).toBe(1);
    expect(failures('7', 'GetMinerIndex', 'wrong_schema')).toBe(1);
    // Refused before it reached the miner (a full bulkhead): a failure, with no latency.
    expect(calls('OnDemandRequest')).toBe(1);
    expect(failures('8', 'OnDemandRequest', 'busy')).toBe(1);
    expect(text).not.toMatch(/^gateway_miner_call_failures_total\{miner="9"/m);
  });

  // 256 uids × 4 synapses × 14 series a histogram (11 buckets, +Inf, sum, count) made 14,336
  // series of one metric (docs/decisions.md, "Metrics and logs": **Miner call latency by synapse
  // only**).
  it('keeps the miner call histogram at 14 series a synapse, whatever the number of miners', async () => {
    const synapses = [
      'GetMinerIndex',
      'GetDataEntityBucket',
      'GetContentsByBuckets',
      'OnDemandRequest',
    ];
    for (let uid = 0; uid < 256; uid++)
      for (const synapse of synapses) metrics.observeMinerCall(uid, synapse, 0.2);
    const text = await metrics.scrape();
    const series = text
      .split('\n')
      .filter((line) => line.startsWith('gateway_miner_call_duration_seconds'));
    expect(series).toHaveLength(4 * 14);
    expect(
      sample(text, 'gateway_miner_call_duration_seconds_count', { endpoint: 'OnDemandRequest' }),
    ).toBe(256);
  });

  it('counts each quorum outcome under its own name', async () => {
    const outcomes = ['quorum', 'partial', 'no_answer', 'no_miners'] as const;
    outcomes.forEach((outcome, index) => {
      for (let i = 0; i <= index; i++) metrics.recordQuorumOutcome(outcome);
    });
    for (const [index, outcome] of outcomes.entries())
      expect(await valueOf(metrics, 'gateway_quorum_outcomes_total', { outcome })).toBe(index + 1);
  });

  it('has the four on-demand series from the start, and counts each answer under its own', async () => {
    const answers = (origin: string, status: string) =>
      valueOf(metrics, 'gateway_on_demand_answers_total', { origin, status });
    for (const origin of ['live', 'stored'])
      for (const status of ['success', 'error']) expect(await answers(origin, status)).toBe(0);
    metrics.recordOnDemandAnswer('stored', 'error');
    expect(await answers('stored', 'error')).toBe(1);
    expect(await answers('live', 'error')).toBe(0);
  });

  it('records an index sync: rows, miners by result, duration and when it completed', async () => {
    metrics.observeIndexSync({
      seconds: 12,
      rows: 5000,
      synced: 3,
      rejected: 1,
      failed: 2,
      skipped: 4,
    });
    expect(await valueOf(metrics, 'gateway_index_sync_rows_total')).toBe(5000);
    for (const [result, count] of Object.entries({ synced: 3, rejected: 1, failed: 2, skipped: 4 }))
      expect([
        result,
        await valueOf(metrics, 'gateway_index_sync_miners_total', { result }),
      ]).toEqual([result, count]);
    expect(await valueOf(metrics, 'gateway_index_sync_duration_seconds_sum')).toBe(12);
    // Unix seconds, as `time() - …` in an alert expects, not milliseconds.
    const completed = await valueOf(metrics, 'gateway_index_sync_last_completed_timestamp_seconds');
    expect(Math.abs(completed! - Date.now() / 1000)).toBeLessThan(5);
  });

  it('counts publication attempts by step, and failures by step and reason', async () => {
    metrics.recordPublicationAttempt('push');
    metrics.recordPublicationAttempt('commit');
    metrics.recordPublicationAttempt('commit');
    metrics.recordPublicationFailure('commit', 'rate_limited');
    const attempts = (step: string) =>
      valueOf(metrics, 'gateway_desirability_publication_attempts_total', { step });
    expect(await attempts('push')).toBe(1);
    expect(await attempts('commit')).toBe(2);
    expect(
      await valueOf(metrics, 'gateway_desirability_publication_failures_total', {
        step: 'commit',
        reason: 'rate_limited',
      }),
    ).toBe(1);
  });

  // Alerts on increase() see the first failure only if the series was there at 0 before it.
  it('has every series of the task, job and answer-check counters from the start, at 0', async () => {
    metrics.announceJob('task-lifecycle');
    const text = await metrics.scrape();
    const zeros = (name: string, label: string, values: string[]) =>
      values.map((value) => [value, sample(text, name, { [label]: value })]);
    const compileReasons = ['disk_full', 'io', 'database', 'conversion', 'other'];
    expect(zeros('gateway_task_compile_failures_total', 'reason', compileReasons)).toEqual(
      compileReasons.map((reason) => [reason, 0]),
    );
    const outcomes = [
      'collected',
      'nothing_new',
      'nothing_collected',
      'failed',
      'skipped',
      'shutdown',
    ];
    expect(zeros('gateway_task_collections_total', 'outcome', outcomes)).toEqual(
      outcomes.map((outcome) => [outcome, 0]),
    );
    const checks = ['malformed', 'wrong_uri', 'no_match', 'duplicate', 'over_limit'];
    expect(zeros('gateway_miner_items_dropped_total', 'check', checks)).toEqual(
      checks.map((check) => [check, 0]),
    );
    const answers = ['all_items', 'most_items'];
    expect(zeros('gateway_miner_answers_dropped_total', 'reason', answers)).toEqual(
      answers.map((reason) => [reason, 0]),
    );
    for (const stage of ['start', 'run'])
      expect(sample(text, 'gateway_job_failures_total', { job: 'task-lifecycle', stage })).toBe(0);
    // A metrics audit found these four made at their first event.
    const fixed: [string, string, string[]][] = [
      [
        'gateway_rate_limit_rejections_total',
        'key_class',
        ['regular', 'validator', 'master', 'unauthenticated'],
      ],
      ['gateway_quorum_outcomes_total', 'outcome', ['quorum', 'partial', 'no_answer', 'no_miners']],
      ['gateway_index_sync_miners_total', 'result', ['synced', 'rejected', 'failed', 'skipped']],
      ['gateway_desirability_publication_attempts_total', 'step', ['push', 'commit']],
    ];
    for (const [name, label, values] of fixed)
      expect(zeros(name, label, values)).toEqual(values.map((value) => [value, 0]));
    for (const step of ['push', 'commit'])
      for (const reason of ['rate_limited', 'error'])
        expect(
          sample(text, 'gateway_desirability_publication_failures_total', { step, reason }),
        ).toBe(0);
  });

  it('counts compile failures, collections, job failures and dropped items each under its label', async () => {
    metrics.recordCompileFailure('disk_full');
    metrics.recordTaskCollection('nothing_collected');
    metrics.recordTaskCollection('nothing_collected');
    metrics.recordJobFailure('index-sync', 'start');
    metrics.recordCheckedAnswer(
      { malformed: 2, wrong_uri: 0, no_match: 3, duplicate: 1, over_limit: 4 },
      'most_items',
    );
    const text = await metrics.scrape();
    expect(sample(text, 'gateway_task_compile_failures_total', { reason: 'disk_full' })).toBe(1);
    expect(sample(text, 'gateway_task_collections_total', { outcome: 'nothing_collected' })).toBe(
      2,
    );
    expect(sample(text, 'gateway_job_failures_total', { job: 'index-sync', stage: 'start' })).toBe(
      1,
    );
    expect(sample(text, 'gateway_miner_items_dropped_total', { check: 'no_match' })).toBe(3);
    expect(sample(text, 'gateway_miner_items_dropped_total', { check: 'duplicate' })).toBe(1);
    expect(sample(text, 'gateway_miner_items_dropped_total', { check: 'over_limit' })).toBe(4);
    expect(sample(text, 'gateway_miner_answers_dropped_total', { reason: 'most_items' })).toBe(1);
    expect(sample(text, 'gateway_miner_answers_dropped_total', { reason: 'all_items' })).toBe(0);
  });

  describe('a gauge read at scrape time', () => {
    let warn: jest.SpyInstance;
    beforeEach(() => {
      warn = jest.spyOn(Logger.prototype, 'warn').mockImplementation(() => undefined);
    });
    afterEach(() => {
      warn.mockRestore();
      jest.useRealTimers();
    });

    it('keeps its last values, and says why, when a read fails', async () => {
      let read = Promise.resolve([{ labels: { state: 'idle' }, value: 4 }]);
      metrics.gauge('things', 'Things', ['state'], () => read);
      expect(await valueOf(metrics, 'gateway_things', { state: 'idle' })).toBe(4);
      read = Promise.reject(new Error('database down'));
      expect(await valueOf(metrics, 'gateway_things', { state: 'idle' })).toBe(4);
      expect(warn).toHaveBeenCalledWith(
        'could not read 1 gauge, left at their last values: database down (gateway_things)',
      );
    });

    // While Postgres is down, every gauge reading it fails the same way: each logging its own
    // warning made some 7 lines per scrape, all saying the same.
    it('logs one warning per scrape, however many reads failed', async () => {
      const refused = () => Promise.reject(new Error('connect ECONNREFUSED 127.0.0.1:5432'));
      metrics.gauge('tasks', 'Tasks', [], refused);
      metrics.gauge('metagraph_block', 'Block', [], refused);
      metrics.gauge('broken', 'Broken', [], () => Promise.reject(new Error('a bug')));
      for (let scrape = 1; scrape <= 2; scrape += 1) {
        await metrics.scrape();
        expect(warn).toHaveBeenCalledTimes(scrape);
        expect(warn).toHaveBeenLastCalledWith(
          'could not read 3 gauges, left at their last values: ' +
            'connect ECONNREFUSED 127.0.0.1:5432 (gateway_tasks, gateway_metagraph_block); ' +
            'a bug (gateway_broken)',
        );
      }
    });

    it('logs nothing when every read answers', async () => {
      metrics.gauge('fine', 'Fine', [], () => Promise.resolve([{ labels: {}, value: 1 }]));
      await metrics.scrape();
      expect(warn).not.toHaveBeenCalled();
    });

    // A Postgres that stops answering without closing its connections must not hold the scrape
    // past Prometheus' own timeout: the scrape answers with the last values.
    it('answers the scrape with its last values when a read does not answer', async () => {
      let read = Promise.resolve([{ labels: {}, value: 7 }]);
      metrics.gauge('hanging', 'Hanging', [], () => read);
      expect(await valueOf(metrics, 'gateway_hanging')).toBe(7);
      jest.useFakeTimers();
      read = new Promise(() => undefined);
      const scraped = metrics.scrape();
      await jest.advanceTimersByTimeAsync(2000);
      expect(sample(await scraped, 'gateway_hanging')).toBe(7);
      expect(warn).toHaveBeenCalledWith(
        'could not read 1 gauge, left at their last values: no answer within 2000 ms (gateway_hanging)',
      );
    });
  });
});
