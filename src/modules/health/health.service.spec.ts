import { setTimeout as sleep } from 'node:timers/promises';
import { Clock } from '../../common/clock/clock';
import { DAY_MS } from '../../common/clock/durations';
import { DatabaseOutageLog } from '../../common/database-outage-log';
import { RedisConnection } from '../../common/redis/redis-connection';
import { loadConfig } from '../../config/load-config';
import { ValidatorIdentity } from '../../network/bittensor/validator-identity';
import { HotkeyCheck, IndexFreshness, MinerCounts } from '../../network/network-status';
import { NetworkService } from '../../network/network.service';
import { PublicationStatusDto } from '../publication/dto/publication-status.dto';
import { PublicationService } from '../publication/publication.service';
import { HealthRepository } from './health.repository';
import { HealthService } from './health.service';

type MetagraphStatus = Awaited<ReturnType<NetworkService['metagraphStatus']>>;

const HOTKEY = '5CV7zrQtjcAv1fhM4KrUgy944hSetfftC6Gy4EUATf1at8k1';
const COUNTS: MinerCounts = {
  total: 12,
  serving: 10,
  validators: 2,
  available: 7,
  addressRefused: 1,
};
const READ_AT = new Date('2026-12-01T10:00:00Z');
/** What an answer tells any key while miners may not be called (MinerCalls' `why`). */
const PUBLIC_WHY = 'the stored metagraph is not from the configured source';
const NO_REASON = { failing: 0, addressRefused: 0, deregistered: 0, noAxon: 0 };
const NOTHING_READ: IndexFreshness = {
  loaded: 0,
  usable: 0,
  unusable: NO_REASON,
  failingUntil: null,
  newestSyncedAt: null,
  oldestSyncedAt: null,
  lastReadAt: null,
};
const LOADED: IndexFreshness = {
  loaded: 3,
  usable: 3,
  unusable: NO_REASON,
  failingUntil: null,
  newestSyncedAt: new Date('2026-12-01T10:05:00Z'),
  oldestSyncedAt: new Date('2026-12-01T08:05:00Z'),
  lastReadAt: new Date('2026-12-01T10:06:00Z'),
};
/** Indexes loaded, but held only by miners the stored-data path may not ask now. */
const ALL_FAILING: IndexFreshness = {
  ...LOADED,
  loaded: 4,
  usable: 0,
  unusable: { failing: 2, addressRefused: 1, deregistered: 0, noAxon: 1 },
  failingUntil: new Date('2026-12-01T10:10:00Z'),
};

/** What the collaborators answer; each test changes what it is about. */
class World {
  pings = 0;
  ping: () => Promise<void> = () => Promise.resolve();
  counts: () => MinerCounts = () => COUNTS;
  hotkey: HotkeyCheck | null = { standing: 'validator' };
  /** The network of the last metagraph the network module read (at start, or since). */
  lastReadNetwork: 'subtensor' | 'file' | 'devnet' | null = null;
  /** Why the stored metagraph is not in use (another source's): the operator's detail. */
  storedNotInUse: string | undefined = undefined;
  metagraph: () => Promise<MetagraphStatus> = () =>
    Promise.resolve({
      source: 'devnet',
      chain: null,
      lastAttempt: { ok: true, at: READ_AT },
      stored: { network: 'devnet', source: 'devnet', block: 40, neurons: 12, readAt: READ_AT },
    });
  redisClient: { ping(): Promise<string> } | null = { ping: () => Promise.resolve('PONG') };
  redisProblem: string | undefined = undefined;
  /** How RedisConnection.problem answers: at once with redisProblem, unless a test says. */
  redisAnswer: () => Promise<string | undefined> = () => Promise.resolve(this.redisProblem);
  publication: () => Promise<Partial<PublicationStatusDto>> = () =>
    Promise.resolve({ state: 'disabled' });
  /** How many times the checks told the outage log the database answered. */
  reachable = 0;
  /** What health's failed checks told the outage log. */
  checkFailures: string[] = [];
  /** The 503s the outage log was told of: health's unhealthy answers. */
  answered503: string[] = [];
  /** The probe the service gave the outage log, for an outage no request probes. */
  outageProbe: (() => Promise<boolean>) | undefined;
  indexReads = 0;
  index: () => Promise<IndexFreshness> = () => Promise.resolve(LOADED);
  /** The service's clock: the machine's, unless a test moves it. */
  clock = new Clock();

  /** The components system-status reports, with this world and configuration. */
  async components(env: Record<string, string> = {}) {
    return (await this.service(env).systemStatus()).components;
  }

  service(env: Record<string, string> = {}): HealthService {
    const repository = {
      ping: () => {
        this.pings++;
        return this.ping();
      },
    };
    const network = {
      countMiners: () => this.counts(),
      hotkeyCheck: () => this.hotkey,
      // As MetagraphService.status: a stored metagraph read is the network last read.
      metagraphStatus: async () => {
        const status = await this.metagraph();
        this.lastReadNetwork = status.stored?.network ?? this.lastReadNetwork;
        return status;
      },
      lastReadNetwork: () => this.lastReadNetwork,
      minerCalls: () =>
        this.storedNotInUse
          ? { allowed: false, why: PUBLIC_WHY, detail: this.storedNotInUse }
          : { allowed: true },
      indexFreshness: () => {
        this.indexReads++;
        return this.index();
      },
    };
    const redis = { client: this.redisClient, problem: () => this.redisAnswer() };
    const publication = { status: () => this.publication() };
    return new HealthService(
      repository as unknown as HealthRepository,
      network as unknown as NetworkService,
      redis as unknown as RedisConnection,
      { hotkey: HOTKEY } as ValidatorIdentity,
      publication as unknown as PublicationService,
      loadConfig(env),
      {
        reachable: () => this.reachable++,
        checkFailed: (message: string) => this.checkFailures.push(message),
        unavailable: (message: string) => this.answered503.push(message),
        probeWith: (probe: () => Promise<boolean>) => (this.outageProbe = probe),
      } as unknown as DatabaseOutageLog,
      this.clock,
    );
  }
}

const SUBTENSOR = { SUBTENSOR_URL: 'ws://127.0.0.1:9944' };
const METAGRAPH_FILE = { METAGRAPH_FILE: '/tmp/metagraph.json' };
/** A promise that never settles: a Postgres or Redis that stopped answering. */
const never = () => new Promise<never>(() => undefined);

describe(HealthService.name, () => {
  let world: World;

  beforeEach(() => {
    world = new World();
  });

  // With no health, system-status or /metrics request, nothing ran the probe that ends an
  // outage's log: the log now asks itself, with the checks' own SELECT 1.
  it("gives the outage log the checks' SELECT 1 as its probe: true when it answers, false when not", async () => {
    world.service().onModuleInit();
    const probe = world.outageProbe!;
    expect(await probe()).toBe(true);
    world.ping = () => Promise.reject(new Error('connect ECONNREFUSED 127.0.0.1:5432'));
    expect(await probe()).toBe(false);
    expect(world.pings).toBe(2);
  });

  // A date a person reads is on the service's clock, as task lifetimes and key expiry are
  // (docs/decisions.md, "Clocks"): it was the machine's, a day apart under CLOCK_SIMULATION.
  it("dates health and system-status by the service's clock", async () => {
    world.clock.advance(DAY_MS);
    const tomorrow = world.clock.now().getTime();
    for (const report of [await world.service().health(), await world.service().systemStatus()])
      expect(Math.abs(Date.parse(report.timestamp) - tomorrow)).toBeLessThan(60_000);
  });

  describe('health', () => {
    it('is healthy with the database and tells the miners available, the network and the hotkey', async () => {
      expect(await world.service().health()).toEqual({
        status: 'healthy',
        timestamp: expect.any(String),
        miners_available: 7,
        version: expect.any(String),
        netuid: 13,
        hotkey: HOTKEY,
        network: 'devnet',
      });
    });

    it('is unhealthy when the database does not answer, whatever else does', async () => {
      world.ping = () => Promise.reject(new Error('connection refused'));
      expect((await world.service().health()).status).toBe('unhealthy');
      expect(world.reachable).toBe(0);
      // The outage starts there when no request met it first (an on-call audit's finding).
      expect(world.checkFailures).toEqual(['connection refused']);
    });

    // Each is answered 503: the outage's count of 503s left them out (a log audit).
    it('counts each unhealthy answer as a 503 of the outage, a cached one too, and no healthy one', async () => {
      const service = world.service();
      await service.health();
      expect(world.answered503).toEqual([]);
      world.ping = () => Promise.reject(new Error('connection refused'));
      const failing = world.service();
      await failing.health();
      await failing.health();
      expect(world.answered503).toEqual(['connection refused', 'connection refused']);
    });

    // The probe's answer is what ends an outage's "database unavailable" lines with one line.
    it('tells the outage log when the database answers', async () => {
      await world.service().health();
      expect(world.reachable).toBe(1);
    });

    // An operator's audit: health's 503 said `unhealthy` and nothing more.
    it('says which check failed and how, never naming a host or quoting the error', async () => {
      world.ping = () =>
        Promise.reject(
          Object.assign(new Error('connect ECONNREFUSED 10.20.30.40:5432'), {
            code: 'ECONNREFUSED',
          }),
        );
      const health = await world.service().health();
      expect(health).toMatchObject({
        status: 'unhealthy',
        reason: 'database: the check failed (ECONNREFUSED); system-status has the detail',
      });
      expect(JSON.stringify(health)).not.toContain('10.20.30.40');
    });

    it('says a frozen database gave no answer within the check’s second', async () => {
      world.ping = never;
      jest.useFakeTimers();
      let answered: Awaited<ReturnType<HealthService['health']>> | undefined;
      try {
        void Promise.resolve(world.service().health()).then((health) => (answered = health));
        await jest.advanceTimersByTimeAsync(1000);
      } finally {
        jest.useRealTimers();
      }
      expect(answered).toMatchObject({
        status: 'unhealthy',
        reason: 'database: no answer within 1000 ms',
      });
    });

    it('says only that the check failed of an error without a code', async () => {
      world.ping = () => Promise.reject(new Error('password authentication failed for user "x"'));
      expect(await world.service().health()).toMatchObject({
        reason: 'database: the check failed; system-status has the detail',
      });
    });

    it('checks at most once a second however often it is polled, and answers at once meanwhile', async () => {
      // The cache's clock (performance.now) is the test's: real sleeps of 0.5 s and 0.55 s had
      // a stalled machine's first one outlast the second.
      let now = performance.now();
      const clock = jest.spyOn(performance, 'now').mockImplementation(() => now);
      /** Moves the clock on; the real wait lets the cache drop its 1 ms memo of the time. */
      const after = async (ms: number) => {
        now += ms;
        await sleep(5);
      };
      try {
        const service = world.service();
        const polls = await Promise.all([service.health(), service.health(), service.health()]);
        expect(polls.map((poll) => poll.status)).toEqual(['healthy', 'healthy', 'healthy']);
        // A fresh result is not a promise: the balancer's poll costs no check and no wait.
        expect(service.health()).not.toBeInstanceOf(Promise);
        expect(world.pings).toBe(1);

        await after(999);
        await service.health();
        expect(world.pings).toBe(1);
        await after(2);
        await service.health();
        expect(world.pings).toBe(2);
      } finally {
        clock.mockRestore();
      }
    });

    // Asked once a rest after a failed command is over, Redis' state waits for its PING (up
    // to a second): a balancer's poll, whose answer does not carry it, must not.
    it('answers without asking about Redis, which its answer does not carry', async () => {
      world.redisClient = { ping: never };
      world.redisAnswer = never;
      const answer = await Promise.race([world.service().health(), sleep(500)]);
      expect(answer).toMatchObject({ status: 'healthy' });
    });

    it('names the configured source when the stored metagraph cannot be read', async () => {
      world.metagraph = () => Promise.reject(new Error('database away'));
      expect((await world.service().health()).network).toBeNull();
      expect((await world.service(SUBTENSOR).health()).network).toBe('subtensor');
      expect((await world.service(METAGRAPH_FILE).health()).network).toBe('file');
    });

    // The devnet's metagraph is a METAGRAPH_FILE: by configuration alone, simulated miners
    // would be reported as a file of the real network for the outage's length.
    it('names the network last read while the stored metagraph cannot be read', async () => {
      let now = performance.now();
      const clock = jest.spyOn(performance, 'now').mockImplementation(() => now);
      try {
        const service = world.service(METAGRAPH_FILE);
        expect((await service.health()).network).toBe('devnet');
        world.metagraph = () => Promise.reject(new Error('database away'));
        now += 1001;
        await sleep(5);
        expect((await service.health()).network).toBe('devnet');
      } finally {
        clock.mockRestore();
      }
    });

    // A fresh devnet start whose first health poll came during the outage said `file`.
    it('names the network read at start when the outage came before any health check', async () => {
      world.metagraph = () => Promise.reject(new Error('database away'));
      world.lastReadNetwork = 'devnet';
      const service = world.service(METAGRAPH_FILE);
      expect((await service.health()).network).toBe('devnet');
      expect((await service.systemStatus()).network).toBe('devnet');
    });

    it('says null until a metagraph was read, even with a source configured', async () => {
      world.metagraph = () =>
        Promise.resolve({ source: 'subtensor', chain: null, lastAttempt: null, stored: undefined });
      expect((await world.service(SUBTENSOR).health()).network).toBeNull();
    });
  });

  describe('system status', () => {
    it('is healthy when every component is, with each one detailed', async () => {
      const status = await world.service().systemStatus();
      expect(status).toMatchObject({ status: 'healthy', network: 'devnet' });
      expect(status.uptime_seconds).toBe(0);
      expect(status.components).toEqual({
        database: { status: 'healthy', latency_ms: expect.any(Number) },
        redis: { status: 'healthy', latency_ms: expect.any(Number) },
        miners: {
          status: 'healthy',
          latency_ms: null,
          available: 7,
          total: 12,
          serving: 10,
          validators: 2,
          address_refused: 1,
          hotkey_standing: 'validator',
        },
        miner_index: {
          status: 'healthy',
          latency_ms: expect.any(Number),
          loaded: 3,
          usable: 3,
          newest_synced_at: '2026-12-01T10:05:00.000Z',
          oldest_synced_at: '2026-12-01T08:05:00.000Z',
          last_read_at: '2026-12-01T10:06:00.000Z',
        },
        chain: expect.objectContaining({ status: 'disabled', block: null }),
        publication: { status: 'disabled', latency_ms: null, state: 'disabled' },
      });
    });

    // An audit's finding: uptime was the wall clock's distance from the start, negative once
    // the clock was set back (docs/decisions.md, "Clocks").
    it('counts uptime on a monotonic clock, not a step of the wall clock back', async () => {
      const service = world.service();
      const started = performance.now();
      const stepped = Date.now() - 6 * 3_600_000;
      const wall = jest.spyOn(Date, 'now').mockImplementation(() => stepped);
      const monotonic = jest.spyOn(performance, 'now').mockImplementation(() => started + 5_000);
      try {
        expect((await service.systemStatus()).uptime_seconds).toBe(5);
      } finally {
        wall.mockRestore();
        monotonic.mockRestore();
      }
    });

    it('is unhealthy without the database, and degraded for each other component that is not well', async () => {
      const degradations: [string, (world: World) => void][] = [
        ['redis', (w) => (w.redisProblem = 'Redis unreachable')],
        ['miners', (w) => (w.counts = () => ({ ...COUNTS, available: 0 }))],
        ['miner_index', (w) => (w.index = () => Promise.resolve(NOTHING_READ))],
        ['miner_index', (w) => (w.index = () => Promise.resolve(ALL_FAILING))],
        ['chain', (w) => (w.metagraph = () => Promise.reject(new Error('database away')))],
        ['publication', (w) => (w.publication = () => Promise.resolve({ state: 'failed' }))],
      ];
      for (const [component, degrade] of degradations) {
        const degraded = new World();
        degrade(degraded);
        const status = await degraded.service(SUBTENSOR).systemStatus();
        expect({ component, status: status.status }).toEqual({ component, status: 'degraded' });
      }
      world.ping = () => Promise.reject(new Error('connection refused'));
      world.redisProblem = 'Redis unreachable';
      const status = await world.service().systemStatus();
      expect(status.status).toBe('unhealthy');
      expect(status.components.database).toEqual({
        status: 'unhealthy',
        latency_ms: expect.any(Number),
        error: 'connection refused',
      });
    });

    it('gives up on a check after a second: a frozen database is unhealthy, a frozen Redis degraded', async () => {
      world.ping = never;
      world.redisClient = { ping: never };
      world.publication = never;
      // Fake timers: the three waits of a second run side by side, so the answer is there once
      // a second has passed (timed on a real clock, a stalled machine's second had it late).
      jest.useFakeTimers();
      let answered: Awaited<ReturnType<HealthService['systemStatus']>> | undefined;
      try {
        void world
          .service()
          .systemStatus()
          .then((status) => (answered = status));
        await jest.advanceTimersByTimeAsync(1000);
      } finally {
        jest.useRealTimers();
      }
      expect(answered).toBeDefined();
      const { components } = answered!;
      expect(components.database).toMatchObject({
        status: 'unhealthy',
        error: 'no answer within 1000 ms',
      });
      expect(components.database.latency_ms).toBeGreaterThanOrEqual(990);
      expect(components.redis).toMatchObject({
        status: 'degraded',
        error: 'no answer within 1000 ms',
      });
      expect(components.publication).toMatchObject({
        status: 'degraded',
        error: 'publication state unreadable: no answer within 1000 ms',
      });
    });

    it('times each check it waits for', async () => {
      world.ping = () => sleep(30);
      const { components } = await world.service().systemStatus();
      expect(components.database.latency_ms).toBeGreaterThanOrEqual(25);
    });

    describe('redis', () => {
      it('is disabled without a REDIS_URL', async () => {
        world.redisClient = null;
        expect((await world.components()).redis).toEqual({
          status: 'disabled',
          latency_ms: null,
        });
      });

      it('is degraded with the connection’s problem, without a ping', async () => {
        world.redisProblem = 'Redis unreachable: connect ECONNREFUSED';
        world.redisClient = { ping: () => Promise.reject(new Error('must not be asked')) };
        expect((await world.components()).redis).toEqual({
          status: 'degraded',
          latency_ms: null,
          error: 'Redis unreachable: connect ECONNREFUSED',
        });
      });

      it('is degraded, never unhealthy, when its ping fails', async () => {
        world.redisClient = { ping: () => Promise.reject(new Error('LOADING')) };
        expect((await world.components()).redis).toEqual({
          status: 'degraded',
          latency_ms: expect.any(Number),
          error: 'LOADING',
        });
      });
    });

    describe('miner index', () => {
      it('is degraded while no index is loaded, and says why', async () => {
        world.index = () => Promise.resolve(NOTHING_READ);
        expect((await world.components()).miner_index).toEqual({
          status: 'degraded',
          latency_ms: expect.any(Number),
          loaded: 0,
          usable: 0,
          newest_synced_at: null,
          oldest_synced_at: null,
          last_read_at: null,
          error: expect.stringMatching(
            /^no miner's index is loaded \(no index sync has read one yet\): /,
          ),
        });
      });

      it('is healthy, with no error, from the first loaded index on', async () => {
        world.index = () => Promise.resolve({ ...LOADED, loaded: 1, usable: 1 });
        const { miner_index } = await world.components();
        expect(miner_index).toMatchObject({ status: 'healthy', loaded: 1, usable: 1 });
        expect(miner_index).not.toHaveProperty('error');
      });

      // The stored-data path's "index not loaded" is no usable index (anyIndexLoaded): indexes
      // held only by miners it may not ask made on-demand answer "not loaded yet" while this said
      // healthy, and an operator reading it to diagnose that answer was misled.
      it('is degraded when every miner holding a loaded index may not be asked now, and says why', async () => {
        world.index = () => Promise.resolve(ALL_FAILING);
        expect((await world.components()).miner_index).toEqual({
          status: 'degraded',
          latency_ms: expect.any(Number),
          loaded: 4,
          usable: 0,
          newest_synced_at: '2026-12-01T10:05:00.000Z',
          oldest_synced_at: '2026-12-01T08:05:00.000Z',
          last_read_at: '2026-12-01T10:06:00.000Z',
          error:
            'the indexes of 4 miners are loaded, but none is usable now: 2 failing (circuit open; ' +
            'the first cooldown ends at 2026-12-01T10:10:00.000Z), 1 refused by MINER_ALLOWED_NETWORKS, ' +
            '1 serving no axon: on-demand answers from stored data say no miner holding one can be asked, and ' +
            'query_bucket finds no holder to ask (the statistics still count these indexes)',
        });
      });

      it('names only the reasons that hold, for a single miner too', async () => {
        world.index = () =>
          Promise.resolve({
            ...LOADED,
            loaded: 1,
            usable: 0,
            unusable: { ...NO_REASON, deregistered: 1 },
          });
        expect((await world.components()).miner_index).toMatchObject({
          status: 'degraded',
          error: expect.stringMatching(
            /^the index of 1 miner is loaded, but none is usable now: 1 deregistered: on-demand /,
          ),
        });
      });

      it('stays healthy while some loaded index is usable, the others not', async () => {
        world.index = () =>
          Promise.resolve({ ...ALL_FAILING, usable: 1, unusable: { ...NO_REASON, failing: 3 } });
        const { miner_index } = await world.components();
        expect(miner_index).toMatchObject({ status: 'healthy', loaded: 4, usable: 1 });
        expect(miner_index).not.toHaveProperty('error');
      });

      // "Not loaded yet" and "the network holds nothing" are what a dashboard must tell apart.
      it('says when the last index was read when those read hold nothing', async () => {
        world.index = () =>
          Promise.resolve({ ...NOTHING_READ, lastReadAt: new Date('2026-12-01T10:06:00Z') });
        expect((await world.components()).miner_index).toMatchObject({
          status: 'degraded',
          loaded: 0,
          newest_synced_at: null,
          last_read_at: '2026-12-01T10:06:00.000Z',
          error: expect.stringContaining(
            'the indexes read hold no data, or were dropped since; the last was read at 2026-12-01T10:06:00.000Z',
          ),
        });
      });

      it('is degraded with the cause when it cannot be read, not a failed answer', async () => {
        world.index = () => Promise.reject(new Error('connection terminated'));
        const status = await world.service().systemStatus();
        expect(status.status).toBe('degraded');
        expect(status.components.miner_index).toEqual({
          status: 'degraded',
          latency_ms: expect.any(Number),
          loaded: null,
          usable: null,
          newest_synced_at: null,
          oldest_synced_at: null,
          last_read_at: null,
          error: 'miner index state unreadable: connection terminated',
        });
      });

      it('gives up after the checks’ second', async () => {
        world.index = never;
        jest.useFakeTimers();
        try {
          const status = world.service().systemStatus();
          await jest.advanceTimersByTimeAsync(1000);
          expect((await status).components.miner_index).toMatchObject({
            status: 'degraded',
            latency_ms: 1000,
            loaded: null,
            error: 'miner index state unreadable: no answer within 1000 ms',
          });
        } finally {
          jest.useRealTimers();
        }
      });

      // A query through the main pool: the balancer's poll must not pay for it.
      it('is read by system-status only, once for concurrent requests', async () => {
        const service = world.service();
        await service.health();
        expect(world.indexReads).toBe(0);
        await Promise.all([service.systemStatus(), service.systemStatus()]);
        expect(world.indexReads).toBe(1);
      });
    });

    describe('miners', () => {
      it('is degraded with the hotkey’s problem, which it names', async () => {
        world.hotkey = { standing: 'no_permit', problem: 'hotkey has no validator permit' };
        expect((await world.components()).miners).toMatchObject({
          status: 'degraded',
          error: 'hotkey has no validator permit',
          hotkey_standing: 'no_permit',
          available: 7,
        });
      });

      // Counted in the database, behind a saturated pool's 5 s wait, they were cut at the
      // checks' second and left at 0 (an audit's finding); the metagraph in memory has them.
      it('counts the metagraph in memory, whatever the database', async () => {
        world.ping = never;
        jest.useFakeTimers();
        try {
          const status = world.service().systemStatus();
          await jest.advanceTimersByTimeAsync(1000);
          expect((await status).components.miners).toMatchObject({
            status: 'healthy',
            latency_ms: null,
            available: 7,
            total: 12,
          });
        } finally {
          jest.useRealTimers();
        }
      });

      it('has no standing before a metagraph is loaded', async () => {
        world.hotkey = null;
        expect((await world.components()).miners).toMatchObject({
          status: 'healthy',
          hotkey_standing: null,
        });
      });

      it('is degraded when METAGRAPH_FILE could not be read, keeping the counts of the last read', async () => {
        world.metagraph = () =>
          Promise.resolve({
            source: 'file /tmp/metagraph.json',
            chain: null,
            lastAttempt: { ok: false, at: new Date(), error: 'ENOENT' },
            stored: { network: 'file', source: 'file', block: 3, neurons: 12, readAt: READ_AT },
          });
        expect((await world.components(METAGRAPH_FILE)).miners).toMatchObject({
          status: 'degraded',
          error: 'METAGRAPH_FILE could not be read: ENOENT',
          available: 7,
        });
        // Only a file's read: the devnet's and the chain's have components of their own.
        expect((await world.components()).miners.status).toBe('healthy');
      });

      it("says why none is loaded while the stored metagraph is another source's", async () => {
        const why = 'the stored metagraph (devnet, from file /tmp/devnet.json, block 3) is not …';
        world.storedNotInUse = why;
        world.hotkey = null;
        world.counts = () => ({ ...COUNTS, total: 0, serving: 0, validators: 0, available: 0 });
        world.metagraph = () =>
          Promise.resolve({
            source: 'file /tmp/metagraph.json',
            chain: null,
            lastAttempt: { ok: false, at: new Date(), error: 'ENOENT' },
            stored: undefined,
            storedNotInUse: why,
          });
        const service = world.service();
        expect((await service.systemStatus()).components.miners).toMatchObject({
          status: 'degraded',
          error: why,
          total: 0,
        });
        // Health, which any key reads, names neither the file nor the problem.
        expect(JSON.stringify(await service.health())).not.toMatch(/devnet\.json|stored metagraph/);
        expect((await world.components(METAGRAPH_FILE)).miners).toMatchObject({
          error: `METAGRAPH_FILE could not be read: ENOENT; ${why}`,
        });
      });
    });

    describe('chain', () => {
      it('tells the chain, the block and the age of the metagraph read from it', async () => {
        const readAt = new Date(Date.now() - 90_000);
        world.metagraph = () =>
          Promise.resolve({
            source: 'subtensor ws://127.0.0.1:9944 netuid 13',
            chain: { chain: 'Bittensor', genesisHash: '0x2f05', bestBlock: 99 },
            lastAttempt: { ok: true, at: READ_AT },
            stored: { network: 'subtensor', source: 's', block: 98, neurons: 12, readAt },
          });
        expect((await world.components(SUBTENSOR)).chain).toEqual({
          status: 'healthy',
          latency_ms: null,
          chain_name: 'Bittensor',
          genesis_hash: '0x2f05',
          block: 98,
          last_read_at: readAt.toISOString(),
          age_seconds: 90,
        });
      });

      // A stuck node answers every read, at the same block: its metagraph was reported fresh.
      it('is degraded when the block has not advanced for over 10 minutes, its age from then', async () => {
        const readAt = new Date(Date.now() - 30_000);
        const metagraphAt = (blockAdvancedAt: Date) => () =>
          Promise.resolve({
            source: 's',
            chain: null,
            lastAttempt: { ok: true, at: readAt },
            stored: {
              network: 'subtensor',
              source: 's',
              block: 98,
              neurons: 12,
              readAt,
              blockAdvancedAt,
            },
          } as const);
        const stuckSince = new Date(Date.now() - 11 * 60_000);
        world.metagraph = metagraphAt(stuckSince);
        expect((await world.components(SUBTENSOR)).chain).toMatchObject({
          status: 'degraded',
          block: 98,
          last_read_at: readAt.toISOString(),
          age_seconds: 660,
          error: expect.stringMatching(
            `^the node's block 98 has not advanced since ${stuckSince.toISOString()}`,
          ),
        });
        world.metagraph = metagraphAt(new Date(Date.now() - 9 * 60_000));
        expect((await world.components(SUBTENSOR)).chain).toMatchObject({
          status: 'healthy',
          age_seconds: 540,
        });
      });

      it('is degraded with the last attempt’s error, or "not read yet" before any', async () => {
        world.metagraph = () =>
          Promise.resolve({
            source: 's',
            chain: null,
            lastAttempt: { ok: false, at: new Date(), error: 'connection refused' },
            // A metagraph of another source, stored before: its block is not the chain's.
            stored: { network: 'file', source: 'f', block: 3, neurons: 12, readAt: READ_AT },
          });
        expect((await world.components(SUBTENSOR)).chain).toEqual({
          status: 'degraded',
          latency_ms: null,
          chain_name: null,
          genesis_hash: null,
          block: null,
          last_read_at: null,
          age_seconds: null,
          error: 'connection refused',
        });

        world.metagraph = () =>
          Promise.resolve({ source: 's', chain: null, lastAttempt: null, stored: undefined });
        expect((await world.components(SUBTENSOR)).chain).toMatchObject({
          status: 'degraded',
          error: 'not read yet',
        });
      });

      it('is degraded when the stored metagraph cannot be read', async () => {
        world.metagraph = never;
        expect((await world.components(SUBTENSOR)).chain).toMatchObject({
          status: 'degraded',
          block: null,
          error: 'database unavailable',
        });
      });
    });

    describe('publication', () => {
      it('is healthy while a vote is on its way, with what has been done', async () => {
        world.publication = () =>
          Promise.resolve({
            state: 'committed',
            commit_sha: '3f786850e387550fdab836ed7e6dc881de23001b',
            block_number: 6852691,
          });
        expect((await world.components()).publication).toEqual({
          status: 'healthy',
          latency_ms: null,
          state: 'committed',
          commit_sha: '3f786850e387550fdab836ed7e6dc881de23001b',
          block_number: 6852691,
        });
      });

      it('is degraded after a failure, with its error and the next attempt', async () => {
        world.publication = () =>
          Promise.resolve({
            state: 'failed',
            last_error: 'rate limited: commitments.SpaceLimitExceeded',
            next_attempt_at: '2026-12-01T12:00:00.000Z',
            block_number: 0,
          });
        expect((await world.components()).publication).toEqual({
          status: 'degraded',
          latency_ms: null,
          state: 'failed',
          block_number: 0,
          next_attempt_at: '2026-12-01T12:00:00.000Z',
          error: 'rate limited: commitments.SpaceLimitExceeded',
        });
      });

      it('is degraded when its state cannot be read', async () => {
        world.publication = () => Promise.reject(new Error('database away'));
        expect((await world.components()).publication).toEqual({
          status: 'degraded',
          latency_ms: null,
          state: 'pending',
          error: 'publication state unreadable: database away',
        });
      });
    });
  });
});
