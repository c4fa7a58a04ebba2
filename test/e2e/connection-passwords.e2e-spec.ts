import { Logger } from 'nestjs-pino';
import { freePort } from '../../bench/support/ports';
import { testDatabaseUrl } from '../support/database';
import { LogCapture } from '../support/log-capture';
import { eventually } from '../support/metrics';
import { startTestApp, TestApp } from '../support/test-app';

// `/` and `@` are percent-encoded in the URLs, as pg and ioredis read them.
const CHOSEN_DATABASE_PASSWORD = 'e2e-db/p@ss-0123456789';
const REDIS_PASSWORD = 'e2e-redis/p@ss-0123456789';

/** Each password as configured, as written in its URL, and as a JSON line escapes it. */
const formsOf = (password: string) => [
  password,
  encodeURIComponent(password),
  JSON.stringify(password).slice(1, -1),
];

describe('The passwords of DATABASE_URL and REDIS_URL in the log', () => {
  const capture = new LogCapture();
  let app: TestApp;
  let databaseUrl: string;
  let databasePassword: string;
  let redisUrl: string;

  beforeAll(async () => {
    // The test server trusts loopback, so a password in the URL is never asked for; one the
    // run's URL already carries (an embedded server's) is kept, and is the one looked for.
    const database = new URL(testDatabaseUrl());
    if (!database.password) database.password = encodeURIComponent(CHOSEN_DATABASE_PASSWORD);
    databaseUrl = database.toString();
    databasePassword = decodeURIComponent(database.password);
    // Nothing listens there: ioredis fails to connect, over and over, and the app says so.
    redisUrl = `redis://gateway:${encodeURIComponent(REDIS_PASSWORD)}@127.0.0.1:${await freePort()}/0`;
    app = await startTestApp(
      { LOG_LEVEL: 'info', DATABASE_URL: databaseUrl, REDIS_URL: redisUrl },
      { logDestination: capture },
    );
  });
  afterAll(() => app.close());

  const passwordsIn = (text: string) =>
    [...formsOf(databasePassword), ...formsOf(REDIS_PASSWORD)].filter((form) =>
      text.includes(form),
    );

  it('writes neither when Redis cannot be reached', async () => {
    await eventually(() => {
      expect(capture.text).toContain('Redis unreachable');
      return Promise.resolve();
    });
    expect(passwordsIn(capture.text)).toEqual([]);
  });

  it('redacts both from a line that quotes the URLs, or the passwords alone', () => {
    const logger = app.app.get(Logger);
    logger.warn(`pool of ${databaseUrl} and client of ${redisUrl} failed`, 'Probe');
    logger.error(`AUTH gateway ${REDIS_PASSWORD} refused`, undefined, 'Probe');
    const probed = capture
      .lines<{ context?: string; msg: string }>()
      .filter((line) => line.context === 'Probe');
    expect(probed).toHaveLength(2);
    expect(passwordsIn(JSON.stringify(probed))).toEqual([]);
    expect(probed[0].msg).toContain(':[redacted]@127.0.0.1:');
  });
});
