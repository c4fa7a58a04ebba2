import { setTimeout as sleep } from 'node:timers/promises';
import type { LoggerService } from '@nestjs/common';
import { until } from '../../test/support/until';
import { DatabaseOutageLog, OUTAGE_LOG_INTERVAL_MS, OUTAGE_QUIET_MS } from './database-outage-log';

type Line = { level: 'warn' | 'log'; fields: unknown; msg: string };

describe(DatabaseOutageLog.name, () => {
  const REFUSED = 'connect ECONNREFUSED 127.0.0.1:55439';
  let lines: Line[];
  let now: number;
  let outages: DatabaseOutageLog;
  let logger: LoggerService;

  beforeEach(() => {
    lines = [];
    now = 1_000_000;
    logger = {
      warn: (fields: unknown, msg: string) => lines.push({ level: 'warn', fields, msg }),
      log: (fields: unknown, msg: string) => lines.push({ level: 'log', fields, msg }),
    } as unknown as LoggerService;
    outages = new DatabaseOutageLog(logger, () => now);
  });
  afterEach(() => outages.onModuleDestroy());

  /** `count` unavailable errors, `stepMs` apart. */
  function fail(count: number, stepMs: number, message = REFUSED): void {
    for (let i = 0; i < count; i++) {
      outages.unavailable(message, `request-${i}`);
      now += stepMs;
    }
  }

  it('logs the first of 20 unavailable errors within 10 s at once, and only it', () => {
    fail(20, 400);
    expect(lines).toEqual([
      {
        level: 'warn',
        fields: { request_id: 'request-0', answered_503: 1 },
        msg: `database unavailable: ${REFUSED}`,
      },
    ]);
  });

  it('logs one line per 10 s while it lasts, with the count since the last and the last error', () => {
    fail(20, 400);
    now = 1_000_000 + OUTAGE_LOG_INTERVAL_MS;
    outages.unavailable('Connection terminated due to connection timeout', 'request-late');
    expect(lines).toHaveLength(2);
    expect(lines[1]).toEqual({
      level: 'warn',
      fields: { request_id: 'request-late', answered_503: 20 },
      msg:
        'database unavailable: Connection terminated due to connection timeout ' +
        '(20 requests answered 503 since the last line)',
    });
    // The next 10 s start from that line.
    now += OUTAGE_LOG_INTERVAL_MS - 1;
    outages.unavailable(REFUSED, 'request-quiet');
    expect(lines).toHaveLength(2);
  });

  it('says once that the database is reachable again, how long after and how many 503s', () => {
    fail(20, 400);
    now = 1_000_000 + 12_400;
    outages.reachable();
    outages.reachable();
    expect(lines.slice(1)).toEqual([
      {
        level: 'log',
        fields: { outage_seconds: 12, answered_503: 20 },
        msg: 'database reachable again after 12 s, 20 requests answered 503',
      },
    ]);
    // The next outage is logged from its first error again.
    outages.unavailable(REFUSED, 'request-next');
    expect(lines[2]).toMatchObject({ level: 'warn', msg: `database unavailable: ${REFUSED}` });
  });

  // A full pool's waits are 503s too, while the probe's own connection answers.
  it('does not call the database back while requests still meet it unavailable', () => {
    fail(20, 400);
    outages.unavailable(REFUSED, 'request-just-now');
    outages.reachable();
    expect(lines).toHaveLength(1);
    now += OUTAGE_QUIET_MS;
    outages.reachable();
    expect(lines[1]).toMatchObject({
      level: 'log',
      msg: 'database reachable again after 9 s, 21 requests answered 503',
    });
  });

  // A replica that only a load balancer's health checks reach: no request meets the outage.
  it("starts an outage at health's failed check, with its cause, and ends it with the recovery line", () => {
    outages.checkFailed(REFUSED);
    now += 5000;
    outages.checkFailed(REFUSED);
    expect(lines).toEqual([
      {
        level: 'warn',
        fields: { answered_503: 0 },
        msg: `database unavailable: ${REFUSED} (health's check)`,
      },
    ]);
    // Requests that meet it are counted in the same outage, not as a new one.
    outages.unavailable(REFUSED, 'request-1');
    expect(lines).toHaveLength(1);
    now += OUTAGE_QUIET_MS;
    outages.reachable();
    expect(lines[1]).toEqual({
      level: 'log',
      fields: { outage_seconds: 6, answered_503: 1 },
      msg: 'database reachable again after 6 s, 1 requests answered 503',
    });
  });

  it('says nothing of a database that answers without an outage', () => {
    outages.reachable();
    expect(lines).toEqual([]);
  });

  // Only health, system-status and /metrics ran the probe: with none of them asked for, the
  // recovery went unsaid, and the next outage's count went on from this one's (an audit's finding).
  describe('on its own probe', () => {
    let up: boolean;
    let probes: number;

    beforeEach(() => {
      up = false;
      probes = 0;
      outages = new DatabaseOutageLog(logger, () => now, 20);
      outages.probeWith(() => {
        probes++;
        return Promise.resolve(up);
      });
    });

    it('says the database is back with no request to run the probe, and starts the next outage afresh', async () => {
      fail(20, 400);
      await until(() => Promise.resolve(probes >= 2 || undefined), 5000, 5);
      expect(lines).toHaveLength(1);
      up = true;
      now += OUTAGE_QUIET_MS;
      await until(() => Promise.resolve(lines.length === 2 || undefined), 5000, 5);
      expect(lines[1]).toEqual({
        level: 'log',
        fields: { outage_seconds: 9, answered_503: 20 },
        msg: 'database reachable again after 9 s, 20 requests answered 503',
      });
      // Over, the outage is probed no more.
      const probed = probes;
      await sleep(100);
      expect(probes).toBe(probed);
      outages.unavailable(REFUSED, 'request-next');
      expect(lines[2]).toEqual({
        level: 'warn',
        fields: { request_id: 'request-next', answered_503: 1 },
        msg: `database unavailable: ${REFUSED}`,
      });
    });

    it('probes nothing while no outage was met', async () => {
      await sleep(100);
      expect(probes).toBe(0);
    });

    it('takes a probe that fails as the database still down', async () => {
      outages.probeWith(() => Promise.reject(new Error('Cannot use a pool after calling end')));
      fail(1, 0);
      now += OUTAGE_QUIET_MS;
      await sleep(100);
      expect(lines).toHaveLength(1);
    });
  });
});
