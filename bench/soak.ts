/**
 * Soak: the real service under a fixed rate of mixed traffic for minutes on loopback — health,
 * on-demand queries over a devnet with faulty miners, statistics, key administration and some
 * deliberately bad requests — while its index sync runs on schedule. Prints, every minute, the
 * throughput, 5xx count and the service's RSS; at the end, p50/p99 per route and statuses.
 * Targets: no 5xx, RSS flat and ≤ 300 MB.
 * Run: npm run bench:soak [-- --minutes 10 --rate 40 --max-in-flight 200]
 *   (or BENCH_MINUTES, BENCH_RATE, BENCH_MAX_IN_FLIGHT).
 * The service and the devnet run as children of this script (--serve-app, --serve-devnet).
 */
import os from 'node:os';
import { performance } from 'node:perf_hooks';
import { benchFlags } from './support/flags';
import { describeBehaviour, MinerBehaviour } from '../src/devnet/behaviour';
import { benchAppEnv, benchValidatorKey, createApiKey, serveApp } from './support/app-server';
import { forkServer } from './support/child-server';
import { cleanupOnExit } from './support/cleanup';
import { reachableRedisUrl } from './support/redis';
import { acquireDatabase } from './support/database';
import { forkDevnet, serveDevnet } from './support/devnet-server';
import {
  integerSetting,
  memoryMb,
  numberSetting,
  percentile,
  settingText,
} from './support/measure';
import {
  closeTraffic,
  Context,
  dueAt,
  dueCount,
  KEYWORDS,
  planAt,
  Sample,
  send,
} from './support/soak-traffic';
import { commandLine, formatInt, machineLine, progress, table, tally } from './support/report';
import { RATE_LIMIT_MAX } from '../src/common/throttling/rate-limit-settings';

const text = { type: 'string' } as const;
const { values: flags } = benchFlags({
  options: {
    'serve-app': { type: 'boolean' },
    'serve-devnet': { type: 'boolean' },
    minutes: text,
    rate: text,
    'max-in-flight': text,
  },
});
const options = {
  minutes: numberSetting(settingText('minutes', flags.minutes, 'BENCH_MINUTES'), 10, false),
  rate: numberSetting(settingText('rate', flags.rate, 'BENCH_RATE'), 40, false),
  maxInFlight: integerSetting('max-in-flight', flags['max-in-flight'], 'BENCH_MAX_IN_FLIGHT', 200),
};
const RSS_LIMIT_MB = 300;

/** Honest miners with realistic spread, and one of each fault (some only part of the time). */
const BEHAVIOURS: MinerBehaviour[] = [
  { latencyMs: { min: 20, max: 120 } },
  { latencyMs: { min: 20, max: 120 } },
  { latencyMs: { min: 40, max: 200 } },
  { latencyMs: { min: 40, max: 200 } },
  { latencyMs: { min: 60, max: 300 } },
  { hang: true, faultRate: 0.5, endpoints: ['OnDemandRequest'] },
  { http500: true, faultRate: 0.3 },
  { malformedJson: true, faultRate: 0.3 },
  { wrongSchema: true, faultRate: 0.5 },
  { fabricate: true, faultRate: 0.5 },
  { overclaimSizes: 3 },
];

interface Minute {
  minute: number;
  sent: number;
  completed: number;
  dropped: number;
  fiveXx: number;
  unexpected: number;
  p99: number;
  rssMb: number;
  inFlight: number;
}

async function benchmark() {
  const cleanup = cleanupOnExit();
  cleanup.push(closeTraffic);
  try {
    const database = await acquireDatabase('bench_soak');
    cleanup.push(database.release);
    const devnet = await forkDevnet(__filename, '--serve-devnet', BEHAVIOURS, [
      benchValidatorKey().address,
    ]);
    cleanup.push(devnet.stop);
    const { env, masterKey } = benchAppEnv(database.url);
    const redis = await reachableRedisUrl();
    Object.assign(env, {
      METAGRAPH_FILE: devnet.metagraphFile,
      DEVNET_MINERS: '0',
      // The index sync runs at start and every 2 minutes: the soak covers the background job.
      // A budget that allows it (the miners' own limit of 2 an hour refuses the rest with 403);
      // and none on OnDemandRequest, which the devnet does not limit: the soak's queries go live.
      INDEX_SYNC_ON_START: 'true',
      INDEX_SYNC_INTERVAL: '120',
      MINER_CALL_BUDGETS: 'GetMinerIndex=40/h,OnDemandRequest=none',
      RATE_LIMIT_REGULAR: String(RATE_LIMIT_MAX),
      QUERY_CACHE_TTL_SECONDS: '5',
      ...(redis ? { REDIS_URL: redis } : {}),
    });
    if (!redis) delete env.REDIS_URL;

    const app = await forkServer(__filename, ['--serve-app'], env, 60_000);
    cleanup.push(app.stop);
    const validator = await createApiKey(app.url, masterKey, 'soak-validator', 'validator');
    const regular = await createApiKey(app.url, masterKey, 'soak-regular', 'regular');
    const context: Context = {
      url: app.url,
      masterKey,
      validatorKey: validator.key,
      regularKey: regular.key,
      created: [],
      labels: ['#bitcoin', 'r/bittensor_', '#tao', 'unknown-label', ...KEYWORDS],
    };

    const durationMs = options.minutes * 60_000;
    const samples: Sample[] = [];
    const minutes: Minute[] = [];
    const pending = new Set<Promise<void>>();
    let sent = 0;
    let dropped = 0;
    const start = performance.now();
    const loads = [os.loadavg()[0]];
    const rss = [memoryMb(app.child.pid)];
    progress(`soak: ${options.minutes} min at ${options.rate} req/s, service pid ${app.child.pid}`);

    const minuteReport = (minute: number): void => {
      const of = samples.filter((sample) => sample.minute === minute);
      const entry: Minute = {
        minute: minute + 1,
        sent: of.length,
        completed: of.filter((s) => !s.status.startsWith('error')).length,
        dropped,
        fiveXx: of.filter((s) => s.status.startsWith('5')).length,
        unexpected: of.filter((s) => s.unexpected).length,
        p99:
          of.length > 0
            ? percentile(
                of.map((s) => s.ms),
                0.99,
              )
            : NaN,
        rssMb: memoryMb(app.child.pid),
        inFlight: pending.size,
      };
      minutes.push(entry);
      rss.push(entry.rssMb);
      progress(
        `minute ${entry.minute}: ${formatInt(entry.sent)} done, ${(entry.sent / 60).toFixed(1)} req/s, ` +
          `5xx ${entry.fiveXx}, unexpected ${entry.unexpected}, p99 ${entry.p99.toFixed(0)} ms, ` +
          `RSS ${entry.rssMb.toFixed(0)} MB, in flight ${entry.inFlight}, load ${os.loadavg()[0].toFixed(2)}`,
      );
    };

    let reported = 0;
    await new Promise<void>((done) => {
      const timer = setInterval(() => {
        const elapsed = performance.now() - start;
        const minute = Math.floor(elapsed / 60_000);
        while (reported < Math.min(minute, options.minutes)) minuteReport(reported++);
        if (elapsed >= durationMs) {
          clearInterval(timer);
          done();
          return;
        }
        // Open loop: send what the schedule says is due, whatever the answers' pace.
        const due = dueCount(elapsed, options.rate);
        for (; sent < due; sent++) {
          if (pending.size >= options.maxInFlight) {
            dropped++;
            continue;
          }
          const plan = planAt(context, sent);
          const scheduled = start + dueAt(sent, options.rate);
          const request = send(context, plan, minute, scheduled).then((sample) => {
            samples.push(sample);
            pending.delete(request);
          });
          pending.add(request);
        }
      }, 5);
    });
    await Promise.all(pending);
    if (reported < options.minutes) minuteReport(reported);
    loads.push(os.loadavg()[0]);
    const counts = await devnet.requestCounts();
    return {
      samples,
      minutes,
      sent,
      dropped,
      rss,
      loads,
      counts,
      env,
      redis,
      database: database.description,
    };
  } finally {
    await cleanup.run();
  }
}

function report(result: Awaited<ReturnType<typeof benchmark>>): void {
  const { samples, minutes, rss } = result;
  const ms = (value: number): string => value.toFixed(1);
  const seconds = options.minutes * 60;
  const names = [...new Set(samples.map((sample) => sample.route))].sort();
  const rows = names.map((name) => {
    const of = samples.filter((sample) => sample.route === name);
    const times = of.map((sample) => sample.ms);
    return [
      name,
      formatInt(of.length),
      (of.length / seconds).toFixed(2),
      ms(percentile(times, 0.5)),
      ms(percentile(times, 0.99)),
      tally(of.map((sample) => sample.status)),
    ];
  });
  const fiveXx = samples.filter((sample) => sample.status.startsWith('5')).length;
  const failed = samples.filter((sample) => sample.status.startsWith('error')).length;
  const unexpected = samples.filter((sample) => sample.unexpected);
  const measured = rss.filter((value) => Number.isFinite(value));
  const maxRss = Math.max(...measured);
  // Flat: after the first two minutes of warm-up, the last minute is within 15 % of minute 2.
  const settled = measured[Math.min(2, measured.length - 1)];
  const last = measured[measured.length - 1];
  const growth = (last - settled) / settled;
  const lines = [
    '',
    `soak: the real service under mixed traffic for ${options.minutes} min at ${options.rate} req/s (open loop)`,
    `command:  ${commandLine()}`,
    `machine:  ${machineLine()}; load average ${result.loads.map((l) => l.toFixed(2)).join(' → ')}`,
    `service:  NODE_ENV=production LOG_LEVEL=${result.env.LOG_LEVEL} INDEX_SYNC_INTERVAL=120 s ` +
      `QUERY_CACHE_TTL_SECONDS=5 RATE_LIMIT_WINDOW_SECONDS=${result.env.RATE_LIMIT_WINDOW_SECONDS}; ` +
      `Redis: ${result.redis ?? 'none (in-memory limits and cache)'}`,
    `database: ${result.database}`,
    'traffic:  clients from 127.0.0.1; wrong keys from 127.0.0.2 (a guesser elsewhere, whose ' +
      'lockout must not reach the clients)',
    `devnet:   ${BEHAVIOURS.map((b, uid) => `uid ${uid} ${describeBehaviour(b)}`).join('; ')}`,
    `miner calls: ${result.counts
      .map((c, uid) => `${uid}:${c.OnDemandRequest}/${c.GetMinerIndex}/${c.GetDataEntityBucket}`)
      .join(' ')} (on-demand/index/bucket)`,
    '',
    table([
      ['minute', 'done', 'req/s', '5xx', 'unexpected', 'p99 ms', 'RSS MB', 'in flight'],
      ...minutes.map((m) => [
        String(m.minute),
        formatInt(m.sent),
        (m.sent / 60).toFixed(1),
        String(m.fiveXx),
        String(m.unexpected),
        m.p99.toFixed(0),
        m.rssMb.toFixed(0),
        String(m.inFlight),
      ]),
    ]),
    '',
    table([['route', 'requests', 'req/s', 'p50 ms', 'p99 ms', 'statuses'], ...rows]),
    '',
    `requests: ${formatInt(samples.length)} of ${formatInt(result.sent)} scheduled ` +
      `(${result.dropped} not sent: ${options.maxInFlight} already in flight); ` +
      `throughput ${(samples.length / seconds).toFixed(1)} req/s`,
    `statuses: ${tally(samples.map((sample) => sample.status))}`,
    `unexpected statuses: ${unexpected.length}` +
      (unexpected.length > 0 ? ` (${tally(unexpected.map((s) => `${s.route} ${s.status}`))})` : ''),
    // A request not sent for the in-flight cap is one the service could not take in time: a
    // failure of the target, not a request left out of it.
    `5xx: ${fiveXx}, transport errors/timeouts: ${failed}, not sent: ${result.dropped}  → ` +
      `${fiveXx + failed + result.dropped === 0 ? 'met' : 'MISSED'} (target 0)`,
    `RSS: start ${measured[0].toFixed(0)} MB, after minute 2 ${settled.toFixed(0)} MB, end ${last.toFixed(0)} MB, ` +
      `max ${maxRss.toFixed(0)} MB; growth after warm-up ${(100 * growth).toFixed(1)} %  → ` +
      `${maxRss <= RSS_LIMIT_MB && growth <= 0.15 ? 'met' : 'MISSED'} (target ≤ ${RSS_LIMIT_MB} MB and flat)`,
  ];
  process.stdout.write(`${lines.join('\n')}\n`);
}

if (flags['serve-app']) void serveApp();
else if (flags['serve-devnet']) void serveDevnet();
else
  benchmark().then(report, (error: unknown) => {
    process.stderr.write(`soak failed: ${error instanceof Error ? error.stack : String(error)}\n`);
    process.exit(1);
  });
