import { Logger } from '@nestjs/common';
import { AppConfig } from '../config/app-config';
import { IndexSpotChecks, SyncedMiner } from './index-spot-checks';
import { ServingMiner } from './miner.entity';
import { NetworkService } from './network.service';
import { CallBudgets } from './transport/call-budgets';

const MAX_RESPONSE = 1000;
const miner = (uid: number) => ({ uid, hotkey: `hk${uid}` }) as unknown as ServingMiner;
/** An index row of the miner: one bucket of `bytes`. */
const row = (bytes: number) => ({ source: 2 as const, label: '#tao', timeBucket: 490_000, bytes });

/** Spot checks over fake network and budgets; `fetched` lists the buckets asked for. */
function checks(options: { left: Record<string, number>; outcome?: unknown; askable?: number[] }) {
  const fetched: { uid: number; claimed: number }[] = [];
  const network = {
    availableMiners: () => (options.askable ?? [1, 2, 3]).map(miner),
    spotCheckBucket: (m: ServingMiner, _bucket: unknown, claimed: number) => {
      fetched.push({ uid: m.uid, claimed });
      return Promise.resolve(options.outcome ?? { ok: true, check: { score: 0.7, problems: [] } });
    },
  } as unknown as NetworkService;
  const budgets = {
    left: (hotkeys: string[]) =>
      Promise.resolve(new Map(hotkeys.map((h) => [h, { left: options.left[h] ?? 0 }]))),
  } as unknown as CallBudgets;
  const config = {
    network: { minerMaxResponseBytes: MAX_RESPONSE, indexSync: { spotChecks: 10 } },
  } as unknown as AppConfig;
  return { spot: new IndexSpotChecks(network, budgets, config), fetched };
}

describe(IndexSpotChecks.name, () => {
  // A miner without a GetDataEntityBucket call left would only fail its check for want of one.
  it('checks only miners with a bucket call left', async () => {
    const { spot, fetched } = checks({ left: { hk1: 1, hk2: 0 } });
    const synced: SyncedMiner[] = [
      { miner: miner(1), rows: [row(10)] },
      { miner: miner(2), rows: [row(10)] },
    ];
    expect((await spot.check(synced)).map((r) => r.uid)).toEqual([1]);
    expect(fetched.map((f) => f.uid)).toEqual([1]);
  });

  // An honest miner could not deliver such a bucket within MINER_MAX_RESPONSE_BYTES.
  it('never picks a bucket larger than half the response cap', async () => {
    const { spot, fetched } = checks({ left: { hk1: 1 } });
    for (let i = 0; i < 20; i++)
      await spot.check([
        { miner: miner(1), rows: [row(MAX_RESPONSE / 2), row(MAX_RESPONSE / 2 + 1)] },
      ]);
    expect(new Set(fetched.map((f) => f.claimed))).toEqual(new Set([MAX_RESPONSE / 2]));
    const none = checks({ left: { hk1: 1 } });
    expect(await none.spot.check([{ miner: miner(1), rows: [row(MAX_RESPONSE)] }])).toEqual([]);
    expect(none.fetched).toEqual([]);
  });

  // A refusal of ours (no call left, busy) says nothing of the miner; a timeout does.
  it("scores 0 a fetch failed by the miner's fault, says so, and nothing for a refusal", async () => {
    const warned = jest.spyOn(Logger.prototype, 'warn').mockImplementation(() => undefined);
    const timeout = checks({
      left: { hk1: 1 },
      outcome: { ok: false, reason: 'timeout', message: 't' },
    });
    expect(await timeout.spot.check([{ miner: miner(1), rows: [row(10)] }])).toEqual([
      { uid: 1, score: 0, problems: ['bucket not fetched: t'] },
    ]);
    const refused = checks({
      left: { hk1: 1 },
      outcome: { ok: false, reason: 'no_budget', message: 'n' },
    });
    expect(await refused.spot.check([{ miner: miner(1), rows: [row(10)] }])).toEqual([]);
    expect(warned.mock.calls).toEqual([['miner 1 spot check: bucket not fetched: t']]);
    warned.mockRestore();
  });
});
