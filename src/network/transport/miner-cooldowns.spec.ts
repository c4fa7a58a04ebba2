import { MinerCooldowns } from './miner-cooldowns';

const HOUR_MS = 60 * 60 * 1000;
/** MinerCooldowns' SWEEP_FROM: the number held at which lapsed cooldowns are first dropped. */
const SWEEP_FROM = 1024;

describe(MinerCooldowns.name, () => {
  let now: number;
  let cooldowns: MinerCooldowns<'not_served'>;

  beforeEach(() => {
    now = 0;
    cooldowns = new MinerCooldowns(() => now);
  });

  // Lapsed cooldowns are dropped when started ones reach a number, and are seen only in its
  // own state (a bucket no query asks for again is never looked up again).
  const held = () => (cooldowns as unknown as { until: Map<string, unknown> }).until.size;

  /** Starts `count` cooldowns of buckets of `hotkey` lasting `ms`. */
  function start(hotkey: string, count: number, ms: number): void {
    for (let bucket = 0; bucket < count; bucket++)
      cooldowns.start(hotkey, `GetContentsByBuckets|${bucket}`, 'not_served', ms);
  }

  it('is active until its time has passed, then forgotten', () => {
    cooldowns.start('miner', 'OnDemandRequest', 'not_served', 1_000);

    now = 999;
    expect(cooldowns.active('miner', 'OnDemandRequest')).toBe('not_served');
    expect(cooldowns.active('miner', 'GetMinerIndex')).toBeUndefined();
    expect(cooldowns.active('other', 'OnDemandRequest')).toBeUndefined();
    now = 1_000;
    expect(cooldowns.active('miner', 'OnDemandRequest')).toBeUndefined();
    expect(held()).toBe(0);
  });

  it('drops the lapsed cooldowns once SWEEP_FROM are held, keeping the active ones', () => {
    start('active', 10, HOUR_MS);
    start('lapsed', SWEEP_FROM - 11, 1_000);
    now = 2_000;
    expect(held()).toBe(SWEEP_FROM - 1);

    cooldowns.start('last', 'OnDemandRequest', 'not_served', HOUR_MS);

    expect(held()).toBe(11);
    for (let bucket = 0; bucket < 10; bucket++)
      expect(cooldowns.active('active', `GetContentsByBuckets|${bucket}`)).toBe('not_served');
    expect(cooldowns.active('last', 'OnDemandRequest')).toBe('not_served');
    // Swept down to a few: not again until SWEEP_FROM are held.
    start('lapsing', 100, 1_000);
    now = 4_000;
    cooldowns.start('later', 'OnDemandRequest', 'not_served', HOUR_MS);
    expect(held()).toBe(112);
  });

  it('sweeps again only once the number held has doubled, so that a start stays cheap', () => {
    start('first', SWEEP_FROM, 1_000);
    // All active at the sweep: none dropped.
    expect(held()).toBe(SWEEP_FROM);
    now = 2_000;

    start('second', SWEEP_FROM - 1, HOUR_MS);
    expect(held()).toBe(2 * SWEEP_FROM - 1);
    cooldowns.start('last', 'OnDemandRequest', 'not_served', HOUR_MS);

    expect(held()).toBe(SWEEP_FROM);
  });

  it('drops the log keys whose quiet time is over once SWEEP_FROM are held', () => {
    const quiet = () =>
      (cooldowns as unknown as { quietUntil: Map<string, unknown> }).quietUntil.size;
    // Miners that left: logged once each, never again.
    for (let miner = 0; miner < SWEEP_FROM - 2; miner++)
      expect(cooldowns.shouldLog(`gone-${miner}|OnDemandRequest|blacklisted`, HOUR_MS)).toBe(true);
    expect(cooldowns.shouldLog('kept|OnDemandRequest|blacklisted', 2 * HOUR_MS)).toBe(true);
    expect(quiet()).toBe(SWEEP_FROM - 1);

    now = HOUR_MS;
    expect(cooldowns.shouldLog('new|OnDemandRequest|blacklisted', HOUR_MS)).toBe(true);

    expect(quiet()).toBe(2);
    expect(cooldowns.shouldLog('kept|OnDemandRequest|blacklisted', 2 * HOUR_MS)).toBe(false);
    expect(cooldowns.shouldLog('gone-0|OnDemandRequest|blacklisted', HOUR_MS)).toBe(true);
  });
});
