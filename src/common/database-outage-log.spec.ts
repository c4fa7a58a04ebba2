import type { LoggerService } from '@nestjs/common';
import { DatabaseOutageLog, OUTAGE_LOG_INTERVAL_MS, OUTAGE_QUIET_MS } from './database-outage-log';

type Line = { level: 'warn' | 'log'; fields: unknown; msg: string };

describe(DatabaseOutageLog.name, () => {
  const REFUSED = 'connect ECONNREFUSED 127.0.0.1:55439';
  let lines: Line[];
  let now: number;
  let outages: DatabaseOutageLog;

  beforeEach(() => {
    lines = [];
    now = 1_000_000;
    const logger = {
      warn: (fields: unknown, msg: string) => lines.push({ level: 'warn', fields, msg }),
      log: (fields: unknown, msg: string) => lines.push({ level: 'log', fields, msg }),
    } as unknown as LoggerService;
    outages = new DatabaseOutageLog(logger, () => now);
  });

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

  it('says nothing of a database that answers without an outage', () => {
    outages.reachable();
    expect(lines).toEqual([]);
  });
});
