import { LogCapture } from '../../test/support/log-capture';
import { createStartupLogger } from '../common/logging/logging.module';
import { loggingSettingsFor } from './config.module';
import { loadConfig } from './load-config';

// `@` and `/` are percent-encoded in the URL, as a client reads them.
const DATABASE_PASSWORD = 'db-p@ss/w0rd-0123456789';
const DATABASE_URL = `postgres://gateway:${encodeURIComponent(DATABASE_PASSWORD)}@db.internal:5432/validator`;
const REDIS_PASSWORD = 'r3dis/s3cret@42';
const REDIS_URL = `rediss://:${encodeURIComponent(REDIS_PASSWORD)}@cache.internal:6380/0`;

/** What the root logger writes (start-up's, which shares its options) of the lines `log` logs. */
function logged(
  env: Record<string, string>,
  log: (logger: ReturnType<typeof createStartupLogger>) => void,
): string {
  const capture = new LogCapture();
  const config = { ...loadConfig({ NODE_ENV: 'test', ...env }), logDestination: capture };
  log(createStartupLogger(loggingSettingsFor(config)));
  return capture.text;
}

describe(loggingSettingsFor.name, () => {
  it('scrubs the passwords of DATABASE_URL and REDIS_URL from log lines, as written and decoded', () => {
    const text = logged({ DATABASE_URL, REDIS_URL }, (logger) => {
      logger.error(`pool for ${DATABASE_URL} failed; cache ${REDIS_URL} too`);
      logger.warn(`password ${DATABASE_PASSWORD} rejected`);
      logger.warn({ err: new Error(`AUTH ${REDIS_PASSWORD} refused`) }, 'Redis unreachable');
    });
    for (const password of [DATABASE_PASSWORD, REDIS_PASSWORD])
      for (const form of [password, encodeURIComponent(password), JSON.stringify(password)])
        expect(text).not.toContain(form);
    expect(text).toContain('postgres://gateway:[redacted]@db.internal:5432/validator');
    expect(text).toContain('rediss://:[redacted]@cache.internal:6380/0');
  });

  it('redacts a password that is a word in its URL only, and leaves the word elsewhere', () => {
    const url = 'postgres://postgres:postgres@db.internal:5432/validator';
    const text = logged({ DATABASE_URL: url }, (logger) =>
      logger.error(`cannot use ${url}: database "postgres" does not exist`),
    );
    expect(JSON.parse(text)).toMatchObject({
      msg: 'cannot use postgres://postgres:[redacted]@db.internal:5432/validator: database "postgres" does not exist',
    });
  });

  it('scrubs a password given in the query (pg and ioredis read ?password=)', () => {
    const password = 'q-p4ssw0rd-in-the-query';
    const text = logged(
      {
        DATABASE_URL: `postgres://gateway@db.internal/validator?sslmode=require&password=${password}`,
        REDIS_URL: `redis://cache.internal:6379/0?password=${password}-redis`,
      },
      (logger) => logger.error(`auth ${password} failed; auth ${password}-redis failed`),
    );
    expect(JSON.parse(text)).toMatchObject({
      msg: 'auth [redacted] failed; auth [redacted] failed',
    });
  });

  // node-postgres reads PGPASSWORD from the environment itself when DATABASE_URL has none.
  it('scrubs PGPASSWORD, the password pg takes from the environment', () => {
    const password = 'pg-env-p@ss/0123';
    const text = logged(
      { DATABASE_URL: 'postgres://gateway@db.internal:5432/validator', PGPASSWORD: password },
      (logger) => {
        logger.error(`password authentication failed for ${password}`);
        logger.warn({ env: { PGPASSWORD: password } }, 'environment');
      },
    );
    for (const form of [password, JSON.stringify(password)]) expect(text).not.toContain(form);
    expect(text).toContain('password authentication failed for [redacted]');
  });

  it('leaves a PGPASSWORD that is a short word alone, as a URL password outside its URL', () => {
    const text = logged(
      { DATABASE_URL: 'postgres://gateway@db.internal:5432/validator', PGPASSWORD: 'postgres' },
      (logger) => logger.error('database "postgres" does not exist'),
    );
    expect(JSON.parse(text)).toMatchObject({ msg: 'database "postgres" does not exist' });
  });

  it('scrubs VALIDATOR_HOTKEY_URI, and the phrase of it before its derivation path', () => {
    const phrase = 'legal winner thank year wave sausage worth useful legal winner thank yellow';
    const text = logged({ VALIDATOR_HOTKEY_URI: `${phrase}//validator` }, (logger) => {
      logger.error(`cannot derive from ${phrase}//validator`);
      logger.error(`bad phrase: ${phrase}`);
    });
    expect(text).not.toContain('sausage');
  });

  // A request holding them is not refused: clients do not know them, and the refusal would
  // tell a key holder each guess at a (often hand-chosen) database password that was right.
  it('leaves the connection passwords out of what requests are checked for', () => {
    const { scanner } = loggingSettingsFor(
      loadConfig({ NODE_ENV: 'test', DATABASE_URL, REDIS_URL }),
    );
    expect(scanner.contains(`{"keyword":"${DATABASE_PASSWORD}"}`)).toBe(false);
    expect(scanner.contains(`{"keyword":"${REDIS_PASSWORD}"}`)).toBe(false);
  });
});
