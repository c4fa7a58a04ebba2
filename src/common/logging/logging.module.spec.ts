import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Logger } from 'pino';
import { secretScannerFor } from '../security/secrets';
import {
  createStartupLogger,
  LoggingModule,
  REQUEST_LINE_LOGGER,
  requestId,
  ROOT_LOGGER,
} from './logging.module';
import { LogCapture } from '../../../test/support/log-capture';
import { loggingContext } from '../../../test/support/logging-context';

const MASTER_KEY = 'sk_master_logging_unit_0123456789';
const scanner = secretScannerFor({ masterKey: MASTER_KEY });

/** The two loggers of LoggingModule, as the app gets them, at `level`, writing to a capture. */
async function loggersAt(level: string) {
  const { context, capture } = await loggingContext(level, scanner);
  return {
    root: context.get<Logger>(ROOT_LOGGER),
    requestLines: context.get<Logger>(REQUEST_LINE_LOGGER),
    capture,
    close: () => context.close(),
  };
}

describe(LoggingModule.name, () => {
  it('writes neither its lines nor the request lines below LOG_LEVEL', async () => {
    const { root, requestLines, capture, close } = await loggersAt('warn');
    try {
      root.info('an info line');
      requestLines.info('GET /api/v1/health 200 1ms');
      root.warn('a warning');
      expect(capture.lines().map((line) => line.msg)).toEqual(['a warning']);
    } finally {
      await close();
    }
  });

  // About 60 lines a start, each module and route, at info (a log audit's finding); and Nest's
  // "successfully started", said before the port is bound (a start failing on a busy port).
  it("writes Nest's wiring lines at start only where debug lines are written", async () => {
    for (const [level, expected] of [
      ['info', ['Unsupported route path']],
      [
        'debug',
        [
          'ConfigModule dependencies initialized',
          'Mapped {/api/v1/health, GET} route',
          'HealthController {/api/v1}:',
          'Unsupported route path',
          'Nest application successfully started',
        ],
      ],
    ] as const) {
      const { root, capture, close } = await loggersAt(level);
      try {
        root.info({ context: 'InstanceLoader' }, 'ConfigModule dependencies initialized');
        root.info({ context: 'RouterExplorer' }, 'Mapped {/api/v1/health, GET} route');
        root.info({ context: 'RoutesResolver' }, 'HealthController {/api/v1}:');
        root.warn({ context: 'RouterExplorer' }, 'Unsupported route path');
        root.info({ context: 'NestApplication' }, 'Nest application successfully started');
        expect(capture.lines().map((line) => line.msg)).toEqual(expected);
        // Written as debug lines: at info they read `level 30` under debug (a log audit).
        const wiring = capture
          .lines()
          .filter((line) => line.msg === 'Mapped {/api/v1/health, GET} route');
        expect(wiring.map((line) => line.level)).toEqual(level === 'debug' ? [20] : []);
      } finally {
        await close();
      }
    }
  });

  it('replaces a secret in any line it writes, whatever wrote it there', async () => {
    const { root, capture, close } = await loggersAt('info');
    try {
      root.error(
        { err: new Error(`a library quoting ${MASTER_KEY}`) },
        `failed at /x?key=${encodeURIComponent(MASTER_KEY)}`,
      );
      expect(capture.text).toContain('[redacted]');
      expect(capture.text).not.toContain(MASTER_KEY);
    } finally {
      await close();
    }
  });

  // The second line of defence: headers are never logged, but should a request's ever be, its
  // credentials (too short for the scanner to know them as secrets here) stay out.
  it('redacts the credentials of a request logged with its headers', async () => {
    const { root, capture, close } = await loggersAt('info');
    try {
      const headers = { 'x-api-key': 'key-1', authorization: 'Bearer t-2', cookie: 'c-3' };
      root.info({ req: { headers } }, 'a request');
      expect(capture.lines()[0]).toMatchObject({
        req: {
          headers: { 'x-api-key': '[redacted]', authorization: '[redacted]', cookie: '[redacted]' },
        },
      });
    } finally {
      await close();
    }
  });
});

// Start-up before the app (a wait for another replica's migration lock) logs as the app does.
describe(createStartupLogger.name, () => {
  it("writes the root logger's lines at LOG_LEVEL, secrets replaced, as soon as they are logged", () => {
    const capture = new LogCapture();
    const logger = createStartupLogger({
      level: 'info',
      pretty: false,
      destination: capture,
      scanner,
      lineScanner: scanner,
    });
    const database = logger.child({ context: 'Database' });
    database.debug('below the level');
    database.info(`waiting, said with ${MASTER_KEY}`);
    expect(capture.lines()).toEqual([
      expect.objectContaining({
        level: 30,
        context: 'Database',
        msg: 'waiting, said with [redacted]',
      }),
    ]);
  });
});

describe(requestId.name, () => {
  const idFor = (incoming: string) => {
    const response = { setHeader: jest.fn() };
    const id = requestId(
      { headers: { 'x-request-id': incoming } } as unknown as IncomingMessage,
      response as unknown as ServerResponse,
      scanner,
    );
    expect(response.setHeader).toHaveBeenCalledWith('X-Request-Id', id);
    return id;
  };
  const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

  it('honours an id of 1 to 128 letters, digits and _ . : -, and replaces a longer one', () => {
    const longest = 'a.b:c-d_'.repeat(16);
    expect(idFor(longest)).toBe(longest);
    expect(idFor('x')).toBe('x');
    expect(idFor(`${longest}e`)).toMatch(UUID);
  });

  // Ids are logged and returned in error bodies: one holding a secret would carry it there.
  it('replaces an id that holds a secret', () => {
    expect(idFor(`trace-${MASTER_KEY}`)).toMatch(UUID);
  });

  // A key cut short passed as sane, and was echoed and logged (an audit's finding).
  it('replaces an id that holds 16 characters of a secret, or the start of an issued key', () => {
    expect(idFor(MASTER_KEY.slice(0, -1))).toMatch(UUID);
    expect(idFor(MASTER_KEY.slice(1))).toMatch(UUID);
    expect(idFor(`trace-${MASTER_KEY.slice(5, 21)}`)).toMatch(UUID);
    expect(idFor('sk_live_AAAAAAAAAAAAAAAA')).toMatch(UUID);
    // Fifteen are a client's own text, as is a 32-hex id (nginx's $request_id).
    expect(idFor(MASTER_KEY.slice(0, 15))).toBe(MASTER_KEY.slice(0, 15));
    expect(idFor('0f'.repeat(16))).toBe('0f'.repeat(16));
  });
});
