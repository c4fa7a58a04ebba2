import { Logger } from '@nestjs/common';
import { IndexRow } from '../index/compressed-index';
import { MinerIndexService } from '../index/miner-index.service';
import { chooseForChecks, IndexSpotChecks, SyncedMiner } from './index-spot-checks';
import { ServingMiner } from '../miner.entity';
import { NetworkService } from '../network.service';
import { CallBudgets } from '../transport/call-budgets';
import { testConfig } from '../../../test/support/test-config';

const MAX_RESPONSE = 1000;
const miner = (uid: number) => ({ uid, hotkey: `hk${uid}` }) as unknown as ServingMiner;
/** An index row of the miner: one bucket of `bytes`. */
const row = (bytes: number) => ({ source: 2 as const, label: '#tao', timeBucket: 490_000, bytes });

/** Spot checks over fake network and budgets; `fetched` lists the buckets asked for. */
function checks(options: {
  left: Record<string, number>;
  outcome?: unknown;
  /** The miners available for GetDataEntityBucket now (by default uids 1 to 3). */
  askable?: ServingMiner[];
  /** Indexes stored before this run: claimed bytes and the bucket a sample gives, by uid. */
  stored?: Record<number, { claimed: number; sample: IndexRow }>;
  /** A read that fails, as Postgres failing fails it. */
  failing?: 'budgets' | 'claims' | 'sample';
}) {
  const failed = (what: string) =>
    options.failing === what ? Promise.reject(new Error('Connection terminated')) : undefined;
  const fetched: { uid: number; claimed: number; axonUrl?: string }[] = [];
  const refusedScored: number[] = [];
  const network = {
    recordRefusedChecks: (miners: ServingMiner[]) =>
      refusedScored.push(...miners.map((m) => m.uid)),
    availableMiners: () => options.askable ?? [1, 2, 3].map(miner),
    spotCheckBucket: (m: ServingMiner, _bucket: unknown, claimed: number) => {
      fetched.push({ uid: m.uid, claimed, ...(m.axonUrl && { axonUrl: m.axonUrl }) });
      const outcome =
        typeof options.outcome === 'function'
          ? (options.outcome as (uid: number) => unknown)(m.uid)
          : options.outcome;
      return Promise.resolve(outcome ?? { ok: true, check: { score: 0.7, problems: [] } });
    },
  } as unknown as NetworkService;
  const budgets = {
    left: (hotkeys: string[]) =>
      failed('budgets') ??
      Promise.resolve(new Map(hotkeys.map((h) => [h, { left: options.left[h] ?? 0 }]))),
  } as unknown as CallBudgets;
  const config = testConfig({
    network: { minerMaxResponseBytes: MAX_RESPONSE, indexSync: { spotChecks: 10 } },
  });
  const stored = options.stored ?? {};
  const index = {
    claimedBytes: (uids: number[]) =>
      failed('claims') ??
      Promise.resolve(
        new Map(uids.filter((uid) => stored[uid]).map((uid) => [uid, stored[uid].claimed])),
      ),
    sampleBucket: (uid: number) => failed('sample') ?? Promise.resolve(stored[uid]?.sample),
  } as unknown as MinerIndexService;
  return { spot: new IndexSpotChecks(network, budgets, index, config), fetched, refusedScored };
}

describe(IndexSpotChecks.name, () => {
  // A miner without a GetDataEntityBucket call left would only fail its check for want of one.
  it('checks only miners with a bucket call left', async () => {
    const { spot, fetched } = checks({ left: { hk1: 1, hk2: 0 } });
    const synced: SyncedMiner[] = [
      { miner: miner(1), bucket: row(10), claimed: 10 },
      { miner: miner(2), bucket: row(10), claimed: 10 },
    ];
    expect((await spot.check(synced)).map((r) => r.uid)).toEqual([1]);
    expect(fetched.map((f) => f.uid)).toEqual([1]);
  });

  // The metagraph gave uid 2 to another hotkey during the run: the new owner's index and
  // credibility are not the old owner's check to move.
  it('checks a synced miner only while its uid is still its hotkey, not the uid alone', async () => {
    const { spot, fetched } = checks({
      left: { hk1: 1, hk2: 1, hk9: 1 },
      askable: [miner(1), { ...miner(2), hotkey: 'hk9' }],
    });
    const synced: SyncedMiner[] = [
      { miner: miner(1), bucket: row(10), claimed: 10 },
      { miner: miner(2), bucket: row(10), claimed: 10 },
    ];
    expect((await spot.check(synced)).map((r) => r.uid)).toEqual([1]);
    expect(fetched.map((f) => f.uid)).toEqual([1]);
  });

  // A metagraph applied during the run gave uid 2 another axon: the synced record keeps the
  // old one, someone else's now (or nobody's).
  it('checks a synced miner at the axon it serves now', async () => {
    const at = (uid: number, axonUrl: string) => ({ ...miner(uid), axonUrl }) as ServingMiner;
    const { spot, fetched } = checks({
      left: { hk2: 1 },
      askable: [at(2, 'http://127.0.0.1:9102')],
    });
    await spot.check([{ miner: at(2, 'http://127.0.0.1:9002'), bucket: row(10), claimed: 10 }]);
    expect(fetched).toEqual([{ uid: 2, claimed: 10, axonUrl: 'http://127.0.0.1:9102' }]);
  });

  // A liar refusing its checks (a 403 of any text, a 404, a 401, a 503) kept its credibility:
  // beside a check the run got answered, who we are and our signature are not the cause, and
  // the refusal scores 0 (a statistics audit, then a hostile-miner audit).
  it('scores 0 the checks refused in a run where another was answered', async () => {
    const warned = jest.spyOn(Logger.prototype, 'warn').mockImplementation(() => undefined);
    const { spot, refusedScored } = checks({
      left: { hk1: 1, hk2: 1, hk3: 1 },
      outcome: (uid: number) =>
        uid === 1
          ? { ok: true, check: { score: 1, problems: [] } }
          : {
              ok: false,
              reason: uid === 2 ? 'busy' : 'blacklisted',
              message: `r${uid}`,
              score: null,
              refused: true,
            },
    });
    const results = await spot.check(
      [1, 2, 3].map((uid) => ({ miner: miner(uid), bucket: row(10), claimed: 10 })),
    );
    expect(results.sort((a, b) => a.uid - b.uid)).toEqual([
      { uid: 1, score: 1, problems: [] },
      { uid: 2, score: 0, problems: ['bucket not fetched: r2'] },
      { uid: 3, score: 0, problems: ['bucket not fetched: r3'] },
    ]);
    expect(refusedScored.sort()).toEqual([2, 3]);
    warned.mockRestore();
  });

  // A miner that refused its index call after one sync (or whose call a validator beside us
  // took) was never checked again, its claims counted for good (a statistics audit's finding).
  it('checks a miner not synced this run on a bucket sampled from its stored index', async () => {
    const { spot, fetched } = checks({
      left: { hk1: 1, hk3: 1 },
      stored: { 3: { claimed: 5000, sample: row(777) } },
    });
    const results = await spot.check([{ miner: miner(1), bucket: row(10), claimed: 10 }]);
    expect(results.map((result) => result.uid).sort()).toEqual([1, 3]);
    expect(fetched.sort((a, b) => a.uid - b.uid)).toEqual([
      { uid: 1, claimed: 10 },
      { uid: 3, claimed: 777 },
    ]);
    // Without a call left, or an index, it is not.
    const none = checks({
      left: { hk1: 1, hk3: 0 },
      stored: { 3: { claimed: 5000, sample: row(1) } },
    });
    await none.spot.check([{ miner: miner(1), bucket: row(10), claimed: 10 }]);
    expect(none.fetched.map((f) => f.uid)).toEqual([1]);
  });

  it('says so when a read it needs fails, and checks whom it still can', async () => {
    const warned = jest.spyOn(Logger.prototype, 'warn').mockImplementation(() => undefined);
    try {
      const run = (failing: 'budgets' | 'claims' | 'sample') =>
        checks({
          left: { hk1: 1, hk3: 1 },
          stored: { 3: { claimed: 5000, sample: row(777) } },
          failing,
        }).spot.check([{ miner: miner(1), bucket: row(10), claimed: 10 }]);
      expect(await run('budgets')).toEqual([]);
      expect((await run('claims')).map((result) => result.uid)).toEqual([1]);
      expect((await run('sample')).map((result) => result.uid)).toEqual([1]);
      expect(warned.mock.calls.map(([, message]) => String(message))).toEqual([
        'spot checks: the call budgets not read; fewer miners checked this run',
        "spot checks: the stored indexes' claims not read; fewer miners checked this run",
        "spot checks: a bucket of miner 3's stored index not read; fewer miners checked this run",
      ]);
    } finally {
      warned.mockRestore();
    }
  });

  // Chosen uniformly, a 100× liar among 256 miners was checked about once in 50 hours (a
  // statistics audit's finding): half the checks follow the claimed bytes, half are at random.
  it('chooses half the checks by claimed bytes and the rest at random', () => {
    const liar = { name: 'liar', claimed: 1e12 };
    const honest = Array.from({ length: 255 }, (_, index) => ({ name: `m${index}`, claimed: 1e6 }));
    let liarChosen = 0;
    const others = new Set<string>();
    for (let run = 0; run < 200; run++) {
      const chosen = chooseForChecks([...honest, liar], 5);
      expect(chosen).toHaveLength(5);
      expect(new Set(chosen).size).toBe(5);
      if (chosen.includes(liar)) liarChosen++;
      for (const each of chosen) others.add(each.name);
    }
    expect(liarChosen).toBe(200);
    // The random half reaches far beyond a few: every honest miner has its chance.
    expect(others.size).toBeGreaterThan(200);
    expect(chooseForChecks([liar], 5)).toEqual([liar]);
    expect(chooseForChecks([], 5)).toEqual([]);
  });

  // A liar with a few honest small buckets and large false claims was checked only on the
  // small ones, or (claims all past what an answer read whole carries) never: a hostile-miner
  // audit's finding. Large claims are checked as they arrive (BucketReader).
  it('picks large claims too, and none from an index claiming no bytes', () => {
    const { spot } = checks({ left: {} });
    const picked = new Set<number>();
    for (let i = 0; i < 50; i++)
      picked.add(spot.pick([row(MAX_RESPONSE / 2), row(MAX_RESPONSE * 1000)])!.bytes);
    expect(picked).toContain(MAX_RESPONSE * 1000);
    expect(spot.pick([row(MAX_RESPONSE * 1000)])!.bytes).toBe(MAX_RESPONSE * 1000);
    expect(spot.pick([row(0)])).toBeUndefined();
    expect(spot.pick([])).toBeUndefined();
  });

  // As the subnet's validator samples: a bucket is picked as often as its share of the bytes.
  it('picks each bucket in proportion to its claimed size', () => {
    const { spot } = checks({ left: {} });
    const rows = [0, 1, 2, 3, 4].map((bytes) => row(bytes));
    const counts = new Map<number, number>();
    for (let i = 0; i < 5000; i++) {
      const bytes = spot.pick(rows)!.bytes;
      counts.set(bytes, (counts.get(bytes) ?? 0) + 1);
    }
    // 500, 1000, 1500 and 2000 expected; uniform picks give 1250 each, a bias to an end 0 or 5000.
    expect(counts.get(0)).toBeUndefined();
    for (const bytes of [1, 2, 3, 4]) {
      expect(counts.get(bytes)).toBeGreaterThan(bytes * 500 * 0.8);
      expect(counts.get(bytes)).toBeLessThan(bytes * 500 * 1.2);
    }
  });

  it('fetches the picked bucket, with the size the index claimed', async () => {
    const { spot, fetched } = checks({ left: { hk1: 1 } });
    await spot.check([{ miner: miner(1), bucket: row(321), claimed: 321 }]);
    expect(fetched).toEqual([{ uid: 1, claimed: 321 }]);
  });

  // A refusal of ours (no call left, busy) says nothing of the miner; a timeout, or its refusal
  // of the check, does.
  it("scores 0 a fetch failed by the miner's fault, says so, and nothing for a refusal", async () => {
    const warned = jest.spyOn(Logger.prototype, 'warn').mockImplementation(() => undefined);
    const timeout = checks({
      left: { hk1: 1 },
      outcome: { ok: false, reason: 'timeout', message: 't', score: 0 },
    });
    expect(await timeout.spot.check([{ miner: miner(1), bucket: row(10), claimed: 10 }])).toEqual([
      { uid: 1, score: 0, problems: ['bucket not fetched: t'] },
    ]);
    const refused = checks({
      left: { hk1: 1 },
      outcome: { ok: false, reason: 'no_budget', message: 'n', score: null },
    });
    expect(await refused.spot.check([{ miner: miner(1), bucket: row(10), claimed: 10 }])).toEqual(
      [],
    );
    // A refusal alone in its run (ours, maybe: our standing, our signature) scores nothing.
    const alone = checks({
      left: { hk1: 1 },
      outcome: { ok: false, reason: 'blacklisted', message: 'b', score: null, refused: true },
    });
    expect(await alone.spot.check([{ miner: miner(1), bucket: row(10), claimed: 10 }])).toEqual([]);
    expect(alone.refusedScored).toEqual([]);
    // uid and hotkey as fields too, to filter a miner's warnings by.
    expect(warned.mock.calls).toEqual([
      [{ uid: 1, hotkey: 'hk1' }, 'miner 1 spot check: bucket not fetched: t'],
    ]);
    warned.mockRestore();
  });
});
