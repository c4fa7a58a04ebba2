import { BucketHolding } from '../index/miner-index-read.repository';
import { BucketKey } from '../protocol';
import {
  BucketToFetch,
  chooseHolders,
  CREDIBILITY_SLACK,
  HolderChoiceOptions,
  StoredSynapse,
} from './holder-choice';

interface Miner {
  uid: number;
  coldkey?: string;
  credibility?: number;
}

function holder(miner: Miner, bucket: BucketKey, bytes = 1000): BucketHolding {
  return {
    timeBucket: bucket.timeBucket,
    label: bucket.label,
    uid: miner.uid,
    hotkey: `hk${miner.uid}`,
    coldkey: miner.coldkey ?? `ck${miner.uid}`,
    axonUrl: `http://127.0.0.1:${9000 + miner.uid}`,
    credibility: miner.credibility ?? 0.9,
    bytes,
  };
}

function buckets(count: number, miners: Miner[], label: string | null = '#tao'): BucketToFetch[] {
  return Array.from({ length: count }, (_, offset) => {
    const bucket = { source: 2 as const, label, timeBucket: 500_000 - offset };
    return { bucket, holders: miners.map((miner) => holder(miner, bucket)) };
  });
}

function options(overrides: Partial<HolderChoiceOptions> = {}): HolderChoiceOptions {
  return {
    callsLeft: () => 8,
    maxCalls: 10,
    maxBytesPerCall: 1_000_000,
    corroborate: false,
    ...overrides,
  };
}

const summary = (choice: ReturnType<typeof chooseHolders>) =>
  choice.calls.map((call) => [call.holder.uid, call.synapse, call.buckets.length]);

describe(chooseHolders.name, () => {
  it('groups a holder’s buckets into one GetContentsByBuckets call of at most 100', () => {
    const choice = chooseHolders(buckets(150, [{ uid: 1 }]), options());
    expect(summary(choice)).toEqual([
      [1, 'GetContentsByBuckets', 100],
      [1, 'GetContentsByBuckets', 50],
    ]);
    expect(choice.calls[0].buckets[0]).toEqual({
      bucket: { source: 2, label: '#tao', timeBucket: 500_000 },
      claimedBytes: 1000,
    });
    expect(choice.calls[0].bytes).toBe(100_000);
  });

  it('prefers the most credible holder, but shares a call with one nearly as credible', () => {
    const strong = { uid: 1, credibility: 0.9 };
    const close = { uid: 2, credibility: 0.9 * CREDIBILITY_SLACK };
    const weak = { uid: 3, credibility: 0.5 };
    // uid 2 carries a call for the first bucket: it takes the second too, over uid 1.
    const [first, second] = buckets(2, [close]);
    second.holders.unshift(holder(strong, second.bucket));
    expect(summary(chooseHolders([first, second], options()))).toEqual([
      [2, 'GetContentsByBuckets', 2],
    ]);
    // Alone, the most credible holder wins.
    expect(summary(chooseHolders([second], options()))).toEqual([[1, 'GetContentsByBuckets', 1]]);
    // A weak holder with a call open does not win over a strong one without.
    const weakFirst = buckets(1, [weak])[0];
    const both = buckets(2, [strong, weak])[1];
    expect(summary(chooseHolders([weakFirst, both], options()))).toEqual([
      [3, 'GetContentsByBuckets', 1],
      [1, 'GetContentsByBuckets', 1],
    ]);
  });

  it('asks no holder beyond the calls it has left, nor more calls than the query may make', () => {
    const left = (hotkey: string) => (hotkey === 'hk1' ? 0 : 1);
    const choice = chooseHolders(
      buckets(150, [{ uid: 1 }, { uid: 2 }]),
      options({ callsLeft: left }),
    );
    expect(summary(choice)).toEqual([[2, 'GetContentsByBuckets', 100]]);
    expect(choice.unassigned).toHaveLength(50);

    const capped = chooseHolders(buckets(250, [{ uid: 1 }]), options({ maxCalls: 2 }));
    expect(capped.calls).toHaveLength(2);
    expect(capped.unassigned).toHaveLength(50);
  });

  it('keeps each call under the byte cap, and leaves out a bucket larger than the cap', () => {
    const entries = buckets(5, [{ uid: 1 }]);
    entries[4].holders[0].bytes = 5000;
    const choice = chooseHolders(entries, options({ maxBytesPerCall: 2500 }));
    expect(summary(choice)).toEqual([
      [1, 'GetContentsByBuckets', 2],
      [1, 'GetContentsByBuckets', 2],
    ]);
    expect(choice.unassigned).toEqual([entries[4].bucket]);
  });

  it('corroborates each bucket with a holder of another coldkey, never with its last call', () => {
    const miners = [{ uid: 1 }, { uid: 2, coldkey: 'ck1' }, { uid: 3 }];
    const choice = chooseHolders(buckets(3, miners), options({ corroborate: true }));
    expect(summary(choice)).toEqual([
      [1, 'GetContentsByBuckets', 3],
      [3, 'GetContentsByBuckets', 3],
    ]);

    const lastCall = (hotkey: string) => (hotkey === 'hk3' ? 1 : 8);
    const spare = chooseHolders(
      buckets(3, miners),
      options({ corroborate: true, callsLeft: lastCall }),
    );
    expect(summary(spare)).toEqual([[1, 'GetContentsByBuckets', 3]]);
  });

  it('gives every bucket its first copy before any gets a second', () => {
    const choice = chooseHolders(
      [...buckets(1, [{ uid: 1 }, { uid: 2 }]), ...buckets(2, [{ uid: 3 }]).slice(1)],
      options({ corroborate: true, maxCalls: 2 }),
    );
    expect(summary(choice)).toEqual([
      [1, 'GetContentsByBuckets', 1],
      [3, 'GetContentsByBuckets', 1],
    ]);
  });

  it('fetches unlabeled buckets one at a time through GetDataEntityBucket, on its own budget', () => {
    const left = (_: string, synapse: StoredSynapse) => (synapse === 'GetDataEntityBucket' ? 1 : 8);
    const choice = chooseHolders(
      buckets(3, [{ uid: 1 }, { uid: 2 }], null),
      options({ corroborate: true, callsLeft: left }),
    );
    expect(summary(choice)).toEqual([
      [1, 'GetDataEntityBucket', 1],
      [2, 'GetDataEntityBucket', 1],
    ]);
    expect(choice.unassigned).toHaveLength(1);
  });
});
