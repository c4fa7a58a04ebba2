import { Logger } from '@nestjs/common';
import { Clock } from '../../common/clock/clock';
import { SynapseName } from '../../common/synapse-names';
import { generateCorpus } from '../../devnet/corpus';
import { toWireEntity } from '../../devnet/miner-records';
import { CredibilityRecorder, MinerScore } from '../credibility-recorder';
import { bucketEnd, bucketStart, XItem } from '../protocol';
import { WireDataEntity } from '../sn13/entities';
import { BucketDelivery } from '../stored/item-store';
import { LiedBuckets } from '../stored/lied-buckets';
import { BudgetLeft, CallBudgets, CallPurpose } from '../transport/call-budgets';
import { MinerClient } from '../transport/miner-client';
import { AnswerStream, MinerReply, MinerTarget, replyOf } from '../transport/miner-reply';
import {
  BudgetUnreadableError,
  KeptForChecksError,
  MinerCallError,
} from '../transport/miner-failures';
import { largestAnswerFor } from '../transport/axon-http';
import { BucketHolder, BucketReader, HOLDERS_CONSIDERED } from './bucket-reader';
import { MemoryItemStore } from '../../../test/support/memory-item-store';
import { until } from '../../../test/support/until';
import { testConfig } from '../../../test/support/test-config';

const HOUR = 500_000;
const LABEL = '#ai';
const DEADLINE_MS = 200;
/** MINER_MAX_RESPONSE_BYTES' default: a miner is asked for claims of at most half of it. */
const MAX_RESPONSE_BYTES = 16 * 1024 * 1024;
const MIB = 1024 * 1024;
const template = generateCorpus({ seed: 5, size: { x: 20, reddit: 1 } }).items.find(
  (item): item is XItem => item.source === 'X',
)!;

/** A post `minute` minutes into the hour (or at `at`), under LABEL unless told. */
function post(id: string, minute: number, options: { label?: string; at?: Date } = {}): XItem {
  const item = structuredClone(template);
  item.uri = `https://x.com/${item.user.username}/status/${id}`;
  item.tweet.id = id;
  item.datetime = (
    options.at ?? new Date(bucketStart(HOUR).getTime() + minute * 60_000)
  ).toISOString();
  item.label = options.label ?? LABEL;
  item.tweet.hashtags = [item.label];
  return item;
}

const sizeOf = (entities: WireDataEntity[]) =>
  entities.reduce((sum, entity) => sum + entity.content_size_bytes, 0);

/** Three posts of the hour, oldest first: what an honest holder sends. */
const ENTITIES = [post('1', 5), post('2', 30), post('3', 50)].map(toWireEntity);
const CLAIM = sizeOf(ENTITIES);

interface FakeHolder {
  uid: number;
  /** Calls of GetDataEntityBucket left, and when the next one frees up. */
  left?: number;
  nextAt?: Date | null;
  /** The miner refused the synapse recently: the client may not ask it. */
  refused?: boolean;
  /** What it sends (ENTITIES unless told), or the error its call ends with. */
  sends?: WireDataEntity[];
  fails?: Error;
  delayMs?: number;
  label?: string | null;
  bytes?: number;
}

/** The answer's text in chunks of 100 bytes, as it arrives. */
async function* arriving(body: unknown): AsyncGenerator<Buffer> {
  const text = Buffer.from(JSON.stringify(body));
  for (let at = 0; at < text.byteLength; at += 100) yield text.subarray(at, at + 100);
}

function setUp(fakes: FakeHolder[], maxResponseBytes = MAX_RESPONSE_BYTES) {
  const calls: { uid: number; synapse: SynapseName; purpose: CallPurpose | undefined }[] = [];
  /** The caps of the answers read as they arrive. */
  const streamed: number[] = [];
  const scores: MinerScore[] = [];
  const timeouts: number[] = [];
  const store = new MemoryItemStore();
  const byUid = new Map(fakes.map((fake) => [fake.uid, fake]));
  const client = {
    mayAsk: (hotkey: string) => !fakes.find((fake) => `hk${fake.uid}` === hotkey)!.refused,
    async call(
      target: MinerTarget,
      synapse: SynapseName,
      _fields: unknown,
      timeoutMs: number,
      purpose?: CallPurpose,
      stream?: AnswerStream,
    ): Promise<MinerReply> {
      const fake = byUid.get(target.uid)!;
      calls.push({ uid: target.uid, synapse, purpose });
      timeouts.push(timeoutMs);
      if (fake.delayMs) await new Promise((resolve) => setTimeout(resolve, fake.delayMs));
      if (fake.fails) throw fake.fails;
      const body = { data_entities: fake.sends ?? ENTITIES };
      if (!stream) return replyOf(body, 1);
      streamed.push(stream.maxBytes);
      return replyOf(await stream.read(arriving(body)), 1);
    },
  } as unknown as MinerClient;
  const budgets = {
    left: (hotkeys: string[]) =>
      Promise.resolve(
        new Map<string, BudgetLeft>(
          hotkeys.map((hotkey) => {
            const fake = fakes.find((entry) => `hk${entry.uid}` === hotkey)!;
            return [hotkey, { left: fake.left ?? 2, nextAt: fake.nextAt ?? null }];
          }),
        ),
      ),
  } as unknown as CallBudgets;
  const credibility = {
    record: (observed: MinerScore[]) => scores.push(...observed),
  } as unknown as CredibilityRecorder;
  const config = testConfig({
    network: {
      queryDeadlineMs: DEADLINE_MS,
      bucketFetchTimeoutMs: 5000,
      minerMaxResponseBytes: maxResponseBytes,
    },
  });
  const clock = new Clock();
  const reader = new BucketReader(
    client,
    budgets,
    store,
    new LiedBuckets(clock),
    credibility,
    clock,
    config,
  );
  // The holders as query_bucket passes them: most credible first.
  const holders: BucketHolder[] = fakes.map((fake) => ({
    uid: fake.uid,
    hotkey: `hk${fake.uid}`,
    axonUrl: `http://127.0.0.1:${9000 + fake.uid}`,
    label: fake.label === undefined ? LABEL : fake.label,
    bytes: fake.bytes ?? CLAIM,
  }));
  return { reader, holders, store, calls, scores, timeouts, clock, streamed };
}

/** A delivery of miner `uid` for the bucket, `ageMs` ago. */
function delivery(uid: number, ageMs: number, items: XItem[], timeBucket = HOUR): BucketDelivery {
  return {
    bucket: { source: 2, label: LABEL, timeBucket },
    minerUid: uid,
    minerHotkey: `hk${uid}`,
    fetchedAt: new Date(Date.now() - ageMs),
    claimedBytes: 100,
    items: items.map((item) => ({ item, timeBucket, contentBytes: 10 })),
  };
}

const ids = (items: { uri: string }[]) => items.map((item) => item.uri.split('/').at(-1));

beforeEach(() => {
  jest.spyOn(Logger.prototype, 'warn').mockImplementation(() => undefined);
});

afterEach(() => jest.restoreAllMocks());

describe(BucketReader.name, () => {
  it('fetches from the most credible holder, keeps the delivery, credits the miner and answers newest first', async () => {
    const { reader, holders, store, calls, scores } = setUp([{ uid: 1 }, { uid: 2 }]);
    const answer = await reader.read(2, HOUR, holders);
    // A user's call: CallBudgets leaves the spot checks their share of it.
    expect(calls).toEqual([{ uid: 1, synapse: 'GetDataEntityBucket', purpose: 'user' }]);
    expect(answer).toMatchObject({
      status: 'success',
      cached: false,
      miner: { uid: 1, hotkey: 'hk1' },
      label: LABEL,
      claimedBytes: CLAIM,
    });
    expect(answer.status === 'success' && ids(answer.items)).toEqual(['3', '2', '1']);
    // The claim was asked against what it sent: all of it, as claimed.
    expect(scores).toEqual([{ uid: 1, hotkey: 'hk1', score: 1 }]);
    expect(store.deliveries).toHaveLength(1);
    expect(store.deliveries[0]).toMatchObject({
      bucket: { source: 2, label: LABEL, timeBucket: HOUR },
      minerUid: 1,
      minerHotkey: 'hk1',
      claimedBytes: CLAIM,
    });
    expect(store.deliveries[0].items).toHaveLength(3);
  });

  it('passes the spot checks’ purpose on to the client for their fetches', async () => {
    const { reader, holders, calls, timeouts } = setUp([{ uid: 1 }]);
    const outcome = await reader.fetch(
      holders[0],
      { source: 2, label: LABEL, timeBucket: HOUR },
      CLAIM,
      'check',
    );
    expect(outcome.ok).toBe(true);
    expect(calls[0].purpose).toBe('check');
    // A whole bucket may take longer than a query's deadline to arrive.
    expect(timeouts).toEqual([5000]);
  });

  // A refusal says nothing of the miner by itself (our standing, our signature may be the cause):
  // the spot checks score it beside the run's other checks (IndexSpotChecks), told it was one.
  it('scores a refusal nothing, and says it was one when the call went out', async () => {
    const bucket = { source: 2 as const, label: LABEL, timeBucket: HOUR };
    const failure = (reason: MinerCallError['reason'], unsent = false) => {
      const error = new MinerCallError(reason, `failed (${reason})`);
      error.unsent = unsent;
      return error;
    };
    const outcomeOf = async (fails: MinerCallError) => {
      const { reader, holders, scores } = setUp([{ uid: 1, fails }]);
      const outcome = await reader.fetch(holders[0], bucket, CLAIM, 'check');
      return outcome.ok ? undefined : { refused: outcome.refused, score: scores[0].score };
    };
    for (const reason of ['blacklisted', 'not_served', 'unauthorized', 'busy'] as const)
      expect([reason, await outcomeOf(failure(reason))]).toEqual([
        reason,
        { refused: true, score: null },
      ]);
    expect(await outcomeOf(failure('blacklisted', true))).toEqual({ refused: false, score: null });
    expect(await outcomeOf(failure('timeout'))).toEqual({ refused: false, score: 0 });
  });

  // Such a claim was never checked, and the statistics counted it in full: a hostile-miner
  // audit's liar claimed 128 MiB an hour and was never caught.
  it('checks a claim larger than an answer read whole as the answer arrives, and keeps none of it', async () => {
    const bucket = { source: 2 as const, label: LABEL, timeBucket: HOUR };
    const liar = setUp([{ uid: 1 }]);
    const claimed = MAX_RESPONSE_BYTES * 4;
    const lie = await liar.reader.fetch(liar.holders[0], bucket, claimed, 'check');
    expect(liar.streamed).toEqual([largestAnswerFor(claimed)]);
    expect(lie.ok && lie.check.problems).toEqual([`claimed ${claimed} bytes, returned ${CLAIM}`]);
    expect(liar.scores).toEqual([{ uid: 1, hotkey: 'hk1', score: CLAIM / claimed }]);
    // An honest one, under a cap its claim is past: checked as it arrives, and found true.
    const honest = setUp([{ uid: 1 }], CLAIM);
    const truth = await honest.reader.fetch(honest.holders[0], bucket, CLAIM, 'check');
    expect(honest.streamed).toHaveLength(1);
    expect(truth.ok && truth.check).toEqual({ score: 1, problems: [], items: [] });
    expect(honest.scores).toEqual([{ uid: 1, hotkey: 'hk1', score: 1 }]);
    // Its entities were counted, not kept: a fetch saved without them would answer query_bucket.
    expect(honest.store.deliveries).toEqual([]);
  });

  // Parsed to the end, 282 MiB of values that are no entities held the event loop for 50 s of
  // CPU (a hostile-miner audit's finding): such an answer is refused where it stops paying.
  it('stops reading an answer of a large claim that carries mostly what counts for nothing', async () => {
    const junk = Array.from({ length: 40_000 }, () =>
      'x'.repeat(100),
    ) as unknown as WireDataEntity[];
    const { reader, holders, scores } = setUp([{ uid: 1, sends: junk }]);
    const bucket = { source: 2 as const, label: LABEL, timeBucket: HOUR };

    const outcome = await reader.fetch(holders[0], bucket, MAX_RESPONSE_BYTES, 'check');

    expect(outcome).toMatchObject({
      ok: false,
      reason: 'malformed',
      message: expect.stringMatching(
        /^response carries \d+ bytes where its entities count 0 toward the claim: not read further$/,
      ),
    });
    expect(scores).toEqual([{ uid: 1, hotkey: 'hk1', score: 0 }]);
  });

  it('keeps no delivery whose every entity failed the checks, and asks the next holder', async () => {
    // Records of another label, filed under this one: the miner said nothing true of the bucket.
    const lies = [post('4', 10, { label: '#other' }), post('5', 20, { label: '#other' })];
    const { reader, holders, store, calls } = setUp([
      { uid: 1, sends: lies.map(toWireEntity) },
      { uid: 2 },
    ]);
    const answer = await reader.read(2, HOUR, holders);
    expect(calls.map((call) => call.uid)).toEqual([1, 2]);
    expect(answer).toMatchObject({ status: 'success', cached: false, miner: { uid: 2 } });
    expect(store.deliveries.map((kept) => kept.minerUid)).toEqual([2]);
  });

  it('answers an error, not an empty bucket, when every holder asked sent only entities that failed the checks', async () => {
    const lies = [post('4', 10, { label: '#other' })].map(toWireEntity);
    const { reader, holders, store } = setUp([
      { uid: 1, sends: lies },
      { uid: 2, sends: lies },
    ]);
    const answer = await reader.read(2, HOUR, holders);
    expect(answer).toEqual({
      status: 'error',
      message: expect.stringContaining(
        `No miner holding bucket ${HOUR} answered with its items: 2 of the 2 asked sent only entities that failed the checks`,
      ),
    });
    expect(store.deliveries).toEqual([]);
    // The next ask is still no "no items" from the store (nor a call to either liar again).
    const again = await reader.read(2, HOUR, holders);
    expect(again.status).toBe('error');
  });

  it('asks a holder that lied about the bucket not again within the hour, and says why', async () => {
    const lies = [post('4', 10, { label: '#other' })].map(toWireEntity);
    const { reader, holders, calls, clock } = setUp([{ uid: 1, sends: lies }]);
    await reader.read(2, HOUR, holders);

    const again = await reader.read(2, HOUR, holders);

    expect(calls.map((call) => call.uid)).toEqual([1]);
    expect(again).toEqual({
      status: 'error',
      message: expect.stringContaining('sent only entities that failed the checks within the hour'),
    });
    clock.advance(61 * 60_000);
    await reader.read(2, HOUR, holders);
    expect(calls.map((call) => call.uid)).toEqual([1, 1]);
  });

  it('keeps an honest empty bucket: no entities is no lie', async () => {
    const { reader, holders, store } = setUp([{ uid: 1, sends: [], bytes: 0 }]);
    const answer = await reader.read(2, HOUR, holders);
    expect(answer).toMatchObject({ status: 'success', items: [] });
    expect(store.deliveries).toHaveLength(1);
  });

  it('answers from the store without calling a miner when the newest fetch is less than an hour old', async () => {
    const { reader, holders, store, calls } = setUp([{ uid: 1 }]);
    await store.save(
      delivery(2, 3 * 3600_000, [post('old', 1)]),
      delivery(3, 10 * 60_000, [post('7', 10), post('8', 40)]),
      // Neither another label's items nor the next hour's first millisecond belong to the bucket.
      {
        ...delivery(4, 10 * 60_000, [post('9', 20, { label: '#other' })]),
        bucket: { source: 2, label: '#other', timeBucket: HOUR },
      },
      delivery(5, 10 * 60_000, [post('10', 0, { at: bucketEnd(HOUR) })], HOUR + 1),
    );
    const answer = await reader.read(2, HOUR, holders);
    expect(calls).toEqual([]);
    // Every stored item of the bucket, whichever miner delivered it; named after the newest fetch.
    expect(answer).toMatchObject({ status: 'success', cached: true, miner: { uid: 3 } });
    expect(answer.status === 'success' && ids(answer.items)).toEqual(['8', '7', 'old']);
  });

  it('calls a holder when the only fetch of the bucket is an hour old, or of another hour', async () => {
    const { reader, holders, store, calls } = setUp([{ uid: 1 }]);
    await store.save(
      delivery(2, 3600_000 + 1000, [post('old', 10)]),
      delivery(3, 60_000, [post('x', 10)], HOUR - 1),
    );
    const answer = await reader.read(2, HOUR, holders);
    expect(calls).toHaveLength(1);
    expect(answer).toMatchObject({ status: 'success', cached: false, miner: { uid: 1 } });
  });

  it('answers from an older fetch, however old, when no holder may be asked', async () => {
    const { reader, holders, store, calls } = setUp([
      { uid: 1, left: 0 },
      { uid: 2, refused: true },
    ]);
    await store.save(delivery(5, 5 * 3600_000, [post('old', 10)]));
    const answer = await reader.read(2, HOUR, holders);
    expect(calls).toEqual([]);
    expect(answer).toMatchObject({ status: 'success', cached: true, miner: { uid: 5 } });
  });

  // No holder may be asked at all (failing, refused address): an earlier fetch under the
  // labels of the holders the index names answers (a review's finding: with no holder given,
  // the store was not looked at).
  it('answers from an earlier fetch under the labels given when no holder is given', async () => {
    const { reader, holders, store, calls } = setUp([{ uid: 1 }]);
    await store.save(delivery(5, 5 * 3600_000, [post('old', 10)]));
    const labels = holders.map((holder) => holder.label);
    expect(await reader.read(2, HOUR, [], labels)).toMatchObject({
      status: 'success',
      cached: true,
      miner: { uid: 5 },
    });
    expect(await reader.read(2, HOUR, [])).toMatchObject({ status: 'error' });
    expect(calls).toEqual([]);
  });

  it('asks no holder whose budget is spent or that refused the call, and says when one is next free', async () => {
    const soon = new Date(Date.now() + 20 * 60_000);
    const later = new Date(Date.now() + 40 * 60_000);
    const { reader, holders, calls } = setUp([
      { uid: 1, left: 0, nextAt: later },
      { uid: 2, left: 0, nextAt: soon },
      { uid: 3, refused: true },
    ]);
    const answer = await reader.read(2, HOUR, holders);
    expect(calls).toEqual([]);
    expect(answer).toEqual({
      status: 'error',
      message: expect.stringContaining(`may be asked for it before ${soon.toISOString()}`),
    });
  });

  it('says how many holders it considered when it read as many as it reads', async () => {
    const spent = Array.from({ length: HOLDERS_CONSIDERED }, (_, uid) => ({ uid, left: 0 }));
    const { reader, holders, calls } = setUp(spent);
    expect(await reader.read(2, HOUR, holders)).toEqual({
      status: 'error',
      message: expect.stringMatching(
        new RegExp(
          `^None of the ${HOLDERS_CONSIDERED} most credible miners holding bucket ${HOUR} may be asked`,
        ),
      ),
    });
    const large = setUp(spent.map((fake) => ({ ...fake, left: 1, bytes: 60 * MIB })));
    expect(await large.reader.read(2, HOUR, large.holders)).toEqual({
      status: 'error',
      message: expect.stringContaining(
        `but each of its ${HOLDERS_CONSIDERED} most credible holders claims more than a miner is asked to send`,
      ),
    });
    expect(calls).toEqual([]);
    expect(large.calls).toEqual([]);
  });

  it('says no holder may be asked when every holder refused the call', async () => {
    const { reader, holders, calls } = setUp([{ uid: 1, refused: true }]);
    const answer = await reader.read(2, HOUR, holders);
    expect(calls).toEqual([]);
    expect(answer).toEqual({
      status: 'error',
      message: expect.stringMatching(/^No miner holding bucket \d+ may be asked for it \(/),
    });
  });

  it('tries at most three failing holders, each losing credibility, and says none answered', async () => {
    const broken = new MinerCallError('timeout', 'timed out');
    const { reader, holders, calls, scores } = setUp(
      [1, 2, 3, 4].map((uid) => ({ uid, fails: broken })),
    );
    const answer = await reader.read(2, HOUR, holders);
    expect(calls.map((call) => call.uid)).toEqual([1, 2, 3]);
    expect(scores).toEqual([1, 2, 3].map((uid) => ({ uid, hotkey: `hk${uid}`, score: 0 })));
    expect(answer).toEqual({
      status: 'error',
      message: `No miner holding bucket ${HOUR} answered`,
    });
  });

  // Other requests spent their calls between the budget read and their turn: no call was made,
  // and counted among the three tried they ended the fetch with "none answered" (a scale audit).
  it('asks past holders whose last call other requests spent meanwhile, and says so when none was left', async () => {
    const spent = new MinerCallError(
      'no_budget',
      "no GetDataEntityBucket call left in this miner's budget",
    );
    const racing = setUp([1, 2, 3, 4].map((uid) => ({ uid, fails: uid < 4 ? spent : undefined })));
    const answer = await racing.reader.read(2, HOUR, racing.holders);
    expect(racing.calls.map((call) => call.uid)).toEqual([1, 2, 3, 4]);
    expect(answer).toMatchObject({ status: 'success', miner: { uid: 4 } });

    // Not a budget that could not be read (Postgres away): that is no other request's doing.
    const unreadable = new BudgetUnreadableError('GetDataEntityBucket', 'connection terminated');
    const away = setUp([1, 2, 3, 4].map((uid) => ({ uid, fails: unreadable })));
    expect(await away.reader.read(2, HOUR, away.holders)).toEqual({
      status: 'error',
      message: `No miner holding bucket ${HOUR} answered`,
    });
    expect(away.calls).toHaveLength(3);

    const { reader, holders } = setUp([1, 2].map((uid) => ({ uid, fails: spent })));
    expect(await reader.read(2, HOUR, holders)).toEqual({
      status: 'error',
      message: `No miner holding bucket ${HOUR} may be asked for it now: other requests of this gateway spent the GetDataEntityBucket calls left to its 2 holders with budget before this one's turn, and it was not fetched before; ask again later`,
    });
  });

  it('asks no holder claiming more than half the answer cap: an honest answer would be oversize', async () => {
    const { reader, holders, calls, scores } = setUp([
      { uid: 1, bytes: 60 * MIB },
      { uid: 2, bytes: MAX_RESPONSE_BYTES / 2 + 1 },
      { uid: 3 },
    ]);
    const answer = await reader.read(2, HOUR, holders);
    expect(calls.map((call) => call.uid)).toEqual([3]);
    expect(scores).toEqual([{ uid: 3, hotkey: 'hk3', score: 1 }]);
    expect(answer).toMatchObject({ status: 'success', miner: { uid: 3 } });
  });

  it('says the bucket is too large to ask for, asking no one, when every holder claims more than the cap allows', async () => {
    const { reader, holders, calls, scores } = setUp([
      { uid: 1, bytes: 60 * MIB, label: null },
      { uid: 2, bytes: 128 * MIB, label: null },
    ]);
    const answer = await reader.read(2, HOUR, holders);
    expect(calls).toEqual([]);
    expect(scores).toEqual([]);
    expect(answer).toEqual({
      status: 'error',
      message:
        `Bucket ${HOUR} is in the index (its most credible holder, miner 1, claims ${60 * MIB} bytes under no label), ` +
        `but every holder claims more than a miner is asked to send at once (${MAX_RESPONSE_BYTES / 2} bytes, half of MINER_MAX_RESPONSE_BYTES), ` +
        'and it was not fetched before; ask for another label or hour',
    });
  });

  // A miner's index files buckets under any text: a message quoting it escapes what prints
  // nothing or rewrites a terminal (a Unicode audit's finding).
  it("escapes a miner's label it quotes", async () => {
    const { reader, holders } = setUp([{ uid: 1, bytes: 60 * MIB, label: '#a\u001b[2J\u202eb' }]);
    const answer = await reader.read(2, HOUR, holders);
    expect(answer).toMatchObject({ status: 'error' });
    expect(answer.status === 'error' && answer.message).toContain('under #a\\u001b[2J\\u202eb), ');
  });

  it('answers from an older fetch of a bucket every holder claims too large to ask for', async () => {
    const { reader, holders, store, calls } = setUp([{ uid: 1, bytes: 60 * MIB }]);
    await store.save(delivery(5, 5 * 3600_000, [post('old', 10)]));
    const answer = await reader.read(2, HOUR, holders);
    expect(calls).toEqual([]);
    expect(answer).toMatchObject({ status: 'success', cached: true, miner: { uid: 5 } });
  });

  it('moves on to the next holder after a failure', async () => {
    const { reader, holders, calls } = setUp([
      { uid: 1, fails: new MinerCallError('malformed', 'bad json') },
      { uid: 2 },
    ]);
    const answer = await reader.read(2, HOUR, holders);
    expect(calls.map((call) => call.uid)).toEqual([1, 2]);
    expect(answer).toMatchObject({ status: 'success', miner: { uid: 2 } });
  });

  it('spends no last call kept for the spot checks, and says when the kept call frees up', async () => {
    const freeAt = new Date(Date.now() + 30 * 60_000);
    const { reader, holders, calls, scores } = setUp([
      { uid: 1, left: 1, fails: new KeptForChecksError('GetDataEntityBucket', freeAt) },
      // Only a last call left too: not asked once the checks are known to keep theirs.
      { uid: 2, left: 1 },
    ]);
    const answer = await reader.read(2, HOUR, holders);
    expect(calls.map((call) => call.uid)).toEqual([1]);
    // Not the miner's fault: no credibility moves.
    expect(scores).toEqual([{ uid: 1, hotkey: 'hk1', score: null }]);
    expect(answer).toEqual({
      status: 'error',
      message: expect.stringContaining(
        `kept for the index spot checks, and it was not fetched before; ask again after ${freeAt.toISOString()}`,
      ),
    });
  });

  it('says none answered, not that calls are kept, when a holder that could be asked failed', async () => {
    const { reader, holders, calls } = setUp([
      { uid: 1, left: 1, fails: new KeptForChecksError('GetDataEntityBucket', null) },
      { uid: 2, left: 2, fails: new MinerCallError('timeout', 'timed out') },
    ]);
    const answer = await reader.read(2, HOUR, holders);
    expect(calls.map((call) => call.uid)).toEqual([1, 2]);
    expect(answer).toEqual({
      status: 'error',
      message: `No miner holding bucket ${HOUR} answered`,
    });
  });

  it('a holder refusing a kept call is no failure: three others are still tried', async () => {
    const broken = new MinerCallError('timeout', 'timed out');
    const { reader, holders, calls } = setUp([
      { uid: 1, left: 1, fails: new KeptForChecksError('GetDataEntityBucket', null) },
      { uid: 2, fails: broken },
      { uid: 3, fails: broken },
      { uid: 4 },
    ]);
    const answer = await reader.read(2, HOUR, holders);
    expect(calls.map((call) => call.uid)).toEqual([1, 2, 3, 4]);
    expect(answer).toMatchObject({ status: 'success', miner: { uid: 4 } });
  });

  // A liar refused users' fetches at no cost, and the refusal (its budget spent, a cooldown)
  // kept it off the hour's spot checks (a hostile-miner audit's finding): beside another
  // holder's answer, a refusal scores 0, as a refused spot check does. Alone, nothing.
  it('scores 0 a holder that refused the fetch once another holder answered, and nothing otherwise', async () => {
    const refusal = (reason: 'blacklisted' | 'busy') =>
      new MinerCallError(reason, `refused (${reason})`);
    const answeredAfter = setUp([
      { uid: 1, fails: refusal('blacklisted') },
      { uid: 2, fails: refusal('busy') },
      { uid: 3 },
    ]);
    const answer = await answeredAfter.reader.read(2, HOUR, answeredAfter.holders);
    expect(answer).toMatchObject({ status: 'success', miner: { uid: 3 } });
    expect(answeredAfter.scores.filter(({ score }) => score === 0).map(({ uid }) => uid)).toEqual([
      1, 2,
    ]);

    const noneAnswered = setUp([
      { uid: 1, fails: refusal('blacklisted') },
      { uid: 2, fails: refusal('busy') },
    ]);
    await noneAnswered.reader.read(2, HOUR, noneAnswered.holders);
    expect(noneAnswered.scores.filter(({ score }) => score === 0)).toEqual([]);
  });

  it('answers from an older fetch when the holder is still sending at the deadline, and keeps what it sends', async () => {
    const { reader, holders, store } = setUp([{ uid: 1, delayMs: DEADLINE_MS + 100 }]);
    await store.save(delivery(5, 2 * 3600_000, [post('old', 10)]));
    const answer = await reader.read(2, HOUR, holders);
    expect(answer).toMatchObject({ status: 'success', cached: true, miner: { uid: 5 } });
    // Miner 1 finishes 100 ms after the deadline: waited for (up to 5 s), not assumed done.
    await until(async () => (store.deliveries.length > 1 ? true : undefined), 5000, 10);
    expect(store.deliveries.map((entry) => entry.minerUid)).toEqual([5, 1]);
  });

  it('waits for a holder that sends within the deadline', async () => {
    const { reader, holders, calls } = setUp([{ uid: 1, delayMs: DEADLINE_MS / 4 }, { uid: 2 }]);
    const answer = await reader.read(2, HOUR, holders);
    expect(answer).toMatchObject({ status: 'success', cached: false, miner: { uid: 1 } });
    expect(calls.map((call) => call.uid)).toEqual([1]);
  });

  it('says the holder is still sending at the deadline when nothing is stored, and asks no other', async () => {
    const { reader, holders, store, calls } = setUp([
      { uid: 1, delayMs: DEADLINE_MS + 100 },
      { uid: 2 },
    ]);
    const answer = await reader.read(2, HOUR, holders);
    expect(answer).toEqual({
      status: 'error',
      message: `Miner 1 is still sending bucket ${HOUR}; ask again shortly, it will be answered from what it sent`,
    });
    expect(calls.map((call) => call.uid)).toEqual([1]);
    await until(async () => (store.deliveries.length > 0 ? true : undefined), 5000, 10);
    expect(store.deliveries.map((entry) => entry.minerUid)).toEqual([1]);
  });

  it('answers what the miner sent even when the store cannot keep it', async () => {
    const { reader, holders, store, scores } = setUp([{ uid: 1 }]);
    store.fail = true;
    const answer = await reader.read(2, HOUR, holders);
    expect(answer).toMatchObject({ status: 'success', cached: false, miner: { uid: 1 } });
    expect(scores).toEqual([{ uid: 1, hotkey: 'hk1', score: 1 }]);
  });
});
