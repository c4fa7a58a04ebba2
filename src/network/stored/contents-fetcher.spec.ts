import { Logger } from '@nestjs/common';
import { Clock } from '../../common/clock/clock';
import { SynapseName } from '../../common/synapse-names';
import { generateCorpus } from '../../devnet/corpus';
import { toWireEntity } from '../../devnet/miner-records';
import { CredibilityRecorder, MinerScore } from '../credibility-recorder';
import { BucketKey, bucketStart, XItem } from '../protocol';
import { wireBucketId } from '../sn13/messages';
import { CallPurpose } from '../transport/call-budgets';
import { MinerClient } from '../transport/miner-client';
import { MinerReply, replyOf } from '../transport/miner-reply';
import { MinerCallError } from '../transport/miner-failures';
import { bucketKeyOf } from './bucket-selection';
import { ContentsFetcher } from './contents-fetcher';
import { PlannedCall, StoredSynapse } from './holder-choice';
import { BucketDelivery, ItemStore } from './item-store';
import { LiedBuckets } from './lied-buckets';
import { testConfig } from '../../../test/support/test-config';

const HOUR = 500_000;
const template = generateCorpus({ seed: 5, size: { x: 20, reddit: 1 } }).items.find(
  (item): item is XItem => item.source === 'X',
)!;

/** A post of the hour under `label` (none: an unlabeled post). */
function post(id: string, label: string | null): XItem {
  const item = structuredClone(template);
  item.uri = `https://x.com/${item.user.username}/status/${id}`;
  item.tweet.id = id;
  item.datetime = new Date(bucketStart(HOUR).getTime() + 60_000).toISOString();
  item.label = label;
  item.tweet.hashtags = label === null ? [] : [label];
  return item;
}

/** `filedUnder`: the label the miner files the posts it sends under (default: the one asked). */
function setUp(fails?: Error, filedUnder?: string) {
  const calls: { synapse: SynapseName; timeoutMs: number; purpose: CallPurpose | undefined }[] = [];
  const scores: MinerScore[] = [];
  const saved: BucketDelivery[] = [];
  const client = {
    call(
      _target: unknown,
      synapse: SynapseName,
      fields: Record<string, unknown>,
      timeoutMs: number,
      purpose?: CallPurpose,
    ): Promise<MinerReply> {
      calls.push({ synapse, timeoutMs, purpose });
      if (fails) return Promise.reject(fails);
      if (synapse === 'GetDataEntityBucket')
        return Promise.resolve(replyOf({ data_entities: [toWireEntity(post('1', null))] }, 1));
      const asked = fields.data_entity_bucket_ids as ReturnType<typeof wireBucketId>[];
      const pairs = asked.map((id) => [
        id,
        [toWireEntity(post('2', filedUnder ?? id.label!.value)).content],
      ]);
      return Promise.resolve(replyOf({ bucket_ids_to_contents: pairs }, 1));
    },
  } as unknown as MinerClient;
  const store = {
    save: (...deliveries: BucketDelivery[]) => {
      saved.push(...deliveries);
      return Promise.resolve();
    },
  } as unknown as ItemStore;
  const credibility = {
    record: (observed: MinerScore[]) => scores.push(...observed),
  } as unknown as CredibilityRecorder;
  const config = testConfig({ network: { bucketFetchTimeoutMs: 5000, queryDeadlineMs: 300 } });
  const clock = new Clock();
  const lies = new LiedBuckets(clock);
  const fetcher = new ContentsFetcher(client, store, lies, credibility, clock, config);
  return { fetcher, calls, scores, saved, lies };
}

/** A call to miner 7 for one bucket, by the synapse its label takes. */
function plannedCall(synapse: StoredSynapse, claimedBytes: number): PlannedCall {
  const bucket: BucketKey = {
    source: 2,
    label: synapse === 'GetDataEntityBucket' ? null : '#ai',
    timeBucket: HOUR,
  };
  return {
    holder: {
      uid: 7,
      hotkey: 'hk7',
      coldkey: 'ck7',
      axonUrl: 'http://127.0.0.1:9007',
      credibility: 1,
    },
    synapse,
    buckets: [{ bucket, claimedBytes }],
    bytes: claimedBytes,
  };
}

beforeEach(() => {
  jest.spyOn(Logger.prototype, 'warn').mockImplementation(() => undefined);
});

afterEach(() => jest.restoreAllMocks());

describe(ContentsFetcher.name, () => {
  it.each<StoredSynapse>(['GetContentsByBuckets', 'GetDataEntityBucket'])(
    "passes a task's purpose on to its %s call, so the budget leaves users their reserve",
    async (synapse) => {
      const { fetcher, calls, saved } = setUp();
      const report = await fetcher.run(plannedCall(synapse, 100), 'task');
      // A bucket's fetch may outlast the query's deadline: it lands in the store for the next.
      expect(calls).toEqual([{ synapse, timeoutMs: 5000, purpose: 'task' }]);
      expect(report).toMatchObject({ returned: 1, dropped: 0 });
      expect(saved[0].items).toHaveLength(1);
    },
  );

  it('keeps the delivery under the miner that sent it, and reports the bucket delivered', async () => {
    const { fetcher, saved, lies } = setUp();
    const call = plannedCall('GetContentsByBuckets', 100);
    const report = await fetcher.run(call);
    expect(saved).toHaveLength(1);
    // Kept, it is no lie: the holder may be asked for the bucket again (the store failing it).
    expect(lies.lied('hk7', call.buckets[0].bucket)).toBe(false);
    // query_bucket names the miner of a stored fetch by these.
    expect(saved[0]).toMatchObject({ minerUid: 7, minerHotkey: 'hk7', claimedBytes: 100 });
    expect(report).toMatchObject({ uid: 7, returned: 1, dropped: 0 });
    expect(report.delivered).toEqual(new Set([bucketKeyOf(call.buckets[0].bucket)]));
  });

  it("charges a miner's own failure to its credibility, and reports why", async () => {
    const { fetcher, scores, saved } = setUp(new MinerCallError('timeout', 'timed out'));
    const report = await fetcher.run(plannedCall('GetContentsByBuckets', 100));
    expect(report).toMatchObject({ uid: 7, failure: 'timeout', score: 0, returned: 0 });
    expect(scores).toEqual([{ uid: 7, hotkey: 'hk7', score: 0 }]);
    expect(saved).toEqual([]);
  });

  // Kept, a delivery dropped whole was stored as the bucket's contents, no items, and answered
  // as "no data" while fresh, when the miner had only lied (a review's finding).
  it('keeps no delivery whose every content the checks dropped: its bucket is not delivered', async () => {
    const { fetcher, scores, saved, lies } = setUp(undefined, '#elsewhere');
    const call = plannedCall('GetContentsByBuckets', 100);
    const report = await fetcher.run(call);
    expect(lies.lied('hk7', call.buckets[0].bucket)).toBe(true);
    expect(report).toMatchObject({ uid: 7, returned: 1, dropped: 1, score: 0 });
    expect(report.failure).toBeUndefined();
    expect(report.delivered).toEqual(new Set());
    expect(saved).toEqual([]);
    expect(scores).toEqual([{ uid: 7, hotkey: 'hk7', score: 0 }]);
  });
});
