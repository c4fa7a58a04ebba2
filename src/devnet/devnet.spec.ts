import { OnDemandRequestFields } from '../network/sn13/messages';
import { randomUUID } from 'node:crypto';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildSignedRequest, SignedRequest } from '../network/bittensor/dendrite';
import { cryptoReady, publicKeyOfAddress, Sr25519Keypair } from '../network/bittensor/keypair';
import { CompressedMinerIndex, DataItem, MetagraphFile, timeBucketId } from '../network/protocol';
import { compileQuery } from '../network/query-matcher';
import { convertEntity } from '../network/sn13/entities';
import { sourceOfId, toSourceName } from '../network/sources';
import { Source } from '../common/source';
import { sourceIdOf } from './miner-records';
import { AxonAnswer, callAxon, sendSigned } from './axon-client';
import { Devnet, DevnetMiner, startDevnet } from './devnet';
import { devnetKeyUri } from './metagraph';
import { DEFAULT_VALIDATOR_MIN_STAKE } from '../common/validator-standing';

const now = new Date('2024-06-01T00:00:00Z');
const SEED = 11;
const HOUR_MS = 60 * 60_000;
const gateway = Sr25519Keypair.fromUri('//Gateway');

function onDemand(overrides: Partial<OnDemandRequestFields>): OnDemandRequestFields {
  return {
    version: 4,
    source: 2,
    usernames: [],
    keywords: [],
    keyword_mode: 'all',
    url: null,
    start_date: null,
    end_date: null,
    limit: 100,
    ...overrides,
  };
}

function call(
  miner: DevnetMiner,
  synapse: string,
  fields: Record<string, unknown>,
  signer = gateway,
): Promise<AxonAnswer> {
  return callAxon({ url: miner.url, hotkey: miner.hotkey, synapse, fields, signer });
}

/** A request whose nonce is exactly `nonceMs` (callAxon's nonces never go back in time). */
function signedAt(
  miner: DevnetMiner,
  synapse: string,
  fields: Record<string, unknown>,
  nonceMs: number,
): SignedRequest {
  const { hostname, port } = new URL(miner.url);
  return buildSignedRequest(
    synapse,
    fields,
    12,
    { ip: hostname, port: Number(port), hotkey: miner.hotkey },
    { hotkey: gateway.address, nonce: BigInt(nonceMs) * 1_000_000n, uuid: randomUUID() },
    (message) => gateway.sign(message),
  );
}

function field(answer: AxonAnswer, name: string): unknown {
  expect(answer.status).toBe(200);
  return (answer.body as Record<string, unknown>)[name];
}

/** The entities of an answer as the gateway reads them; every one must convert. */
function decode(entities: unknown, source: Source): DataItem[] {
  expect(Array.isArray(entities)).toBe(true);
  return (entities as unknown[]).map((entity) => {
    const converted = convertEntity(entity, source);
    if (!converted) throw new Error(`unreadable entity ${JSON.stringify(entity)}`);
    expect(converted.declaredBytes).toBe(converted.contentBytes);
    return converted.item;
  });
}

function readIndex(answer: AxonAnswer): CompressedMinerIndex {
  const serialized = field(answer, 'compressed_index_serialized');
  expect(typeof serialized).toBe('string');
  return JSON.parse(serialized as string) as CompressedMinerIndex;
}

/** The honest answer, by brute force over what the miner holds. */
function expectedAnswer(items: readonly DataItem[], request: OnDemandRequestFields): DataItem[] {
  const matcher = compileQuery({ ...request, source: sourceOfId(request.source)! });
  return items
    .filter((item) => matcher.matches(item))
    .sort(
      (left, right) =>
        right.datetime.localeCompare(left.datetime) || left.uri.localeCompare(right.uri),
    )
    .slice(0, request.limit);
}

const uris = (items: readonly DataItem[]): string[] => items.map((item) => item.uri);

describe('startDevnet', () => {
  let devnet: Devnet;
  let directory: string;

  beforeAll(async () => {
    await cryptoReady();
    directory = await mkdtemp(join(tmpdir(), 'devnet-'));
    devnet = await startDevnet({
      // The call budget has its own tests; here it would only cap how many calls a test makes.
      miners: [0, 1, 2].map(() => ({ behaviour: { strictBudget: false } })),
      seed: SEED,
      now,
      metagraphFile: join(directory, 'nested', 'metagraph.json'),
      validatorHotkeys: [gateway.address],
      corpusSize: { x: 900, reddit: 600 },
    });
  });

  afterAll(async () => {
    await devnet?.stop();
    await rm(directory, { recursive: true, force: true });
  });

  it('writes the metagraph it describes, atomically', async () => {
    const file = join(directory, 'nested', 'metagraph.json');
    expect(devnet.metagraphFile).toBe(file);
    const written = JSON.parse(await readFile(file, 'utf8')) as MetagraphFile;
    expect(written).toEqual(devnet.metagraph);
    expect(await readdir(join(directory, 'nested'))).toEqual(['metagraph.json']);
    expect(written.netuid).toBe(13);
    expect(Number.isInteger(written.block)).toBe(true);
  });

  it('lists miners with their urls, then validators without axons, the given hotkeys last', () => {
    const { neurons } = devnet.metagraph;
    expect(neurons.map((neuron) => neuron.uid)).toEqual([0, 1, 2, 3, 4, 5]);
    for (const miner of devnet.miners) {
      expect(neurons[miner.uid]).toMatchObject({
        hotkey: miner.hotkey,
        coldkey: miner.coldkey,
        axon_url: miner.url,
        validator_permit: false,
      });
      expect(miner.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    }
    const validators = neurons.filter((neuron) => neuron.validator_permit);
    expect(validators).toEqual(devnet.validators);
    expect(validators.map((neuron) => neuron.uid)).toEqual([3, 4, 5]);
    expect(neurons[5]).toMatchObject({ hotkey: gateway.address, axon_url: null });
    const largestMinerStake = Math.max(...neurons.slice(0, 3).map((neuron) => neuron.stake ?? 0));
    for (const validator of validators) {
      expect(validator.axon_url).toBeNull();
      expect(validator.stake).toBeGreaterThanOrEqual(DEFAULT_VALIDATOR_MIN_STAKE);
      expect(validator.stake).toBeGreaterThan(largestMinerStake);
    }
  });

  it('derives every key from its public devnet uri, with miners 0 and 1 sharing a coldkey', () => {
    const { neurons } = devnet.metagraph;
    const addressOf = (uri: string): string => Sr25519Keypair.fromUri(uri).address;
    for (const miner of devnet.miners) {
      expect(miner.hotkey).toBe(addressOf(devnetKeyUri(SEED, 'miner', miner.uid)));
    }
    for (const uid of [3, 4]) {
      expect(neurons[uid].hotkey).toBe(addressOf(devnetKeyUri(SEED, 'validator', uid)));
    }
    expect(neurons[0].coldkey).toBe(addressOf(devnetKeyUri(SEED, 'coldkey', 'pair-0')));
    for (const neuron of neurons) {
      // Real ss58: the checksum holds and the key is 32 bytes.
      expect(publicKeyOfAddress(neuron.hotkey)).toHaveLength(32);
      expect(publicKeyOfAddress(neuron.coldkey)).toHaveLength(32);
    }
    expect(new Set(neurons.map((neuron) => neuron.hotkey)).size).toBe(neurons.length);
    expect(neurons[0].coldkey).toBe(neurons[1].coldkey);
    expect(neurons[2].coldkey).not.toBe(neurons[0].coldkey);
  });

  it("takes calls signed with a devnet validator's key", async () => {
    const validator = Sr25519Keypair.fromUri(devnetKeyUri(SEED, 'validator', 3));
    const answer = await call(devnet.miners[0], 'GetMinerIndex', { version: 4 }, validator);
    expect(answer.status).toBe(200);
  });

  it('answers on-demand queries with the entities of the matching items it holds, newest first', async () => {
    const miner = devnet.miners[1];
    const holdings = devnet.corpus.holdingsOf(1);
    const popular = holdings.find((item) => item.source === 'X');
    const author = popular?.source === 'X' ? popular.user.username : '';
    const requests = [
      onDemand({ keywords: ['#bitcoin'] }),
      onDemand({ usernames: [`@${author.toUpperCase()}`], limit: 1000 }),
      onDemand({ source: 1, keywords: ['/cryptocurrency'], limit: 7 }),
      onDemand({ source: 1, start_date: '2024-05-20T00:00:00', end_date: '2024-05-21' }),
      onDemand({ keywords: ['nobody-says-this'] }),
    ];
    const sizes: number[] = [];
    for (const request of requests) {
      const answer = await call(miner, 'OnDemandRequest', { ...request });
      const items = decode(field(answer, 'data'), sourceOfId(request.source)!);
      const expected = expectedAnswer(holdings, request);
      // Decoded, the entities are the corpus items themselves.
      expect(items).toEqual(expected);
      sizes.push(expected.length);
    }
    // The limit bites on the first and third query; only the last one finds nothing.
    expect(sizes).toEqual([100, expect.any(Number), 7, expect.any(Number), 0]);
    expect(Math.min(sizes[1], sizes[3])).toBeGreaterThan(0);
  });

  // Python 3.10's datetime.fromisoformat refuses a `Z`: a gateway that sent toISOString() got
  // nothing from real miners, and everything from a devnet that read the date its own way.
  it('answers no data, as a real miner does, to a date Python 3.10 cannot read', async () => {
    const miner = devnet.miners[1];
    const ask = async (fields: Partial<OnDemandRequestFields>) => {
      const answer = await call(miner, 'OnDemandRequest', {
        ...onDemand({ source: 1, ...fields }),
      });
      expect(answer.status).toBe(200);
      return field(answer, 'data') as unknown[];
    };
    const start = '2024-05-20T00:00:00';
    expect((await ask({ start_date: `${start}+00:00` })).length).toBeGreaterThan(0);
    expect(await ask({ start_date: `${start}Z` })).toEqual([]);
    expect(await ask({ end_date: `${start}.000Z` })).toEqual([]);
    expect(await ask({ start_date: 'soon' })).toEqual([]);
  });

  it('matches any keyword in keyword_mode any, and answers a url with that item alone', async () => {
    const miner = devnet.miners[1];
    const holdings = devnet.corpus.holdingsOf(1);
    const ask = async (request: OnDemandRequestFields): Promise<string[]> =>
      uris(decode(field(await call(miner, 'OnDemandRequest', { ...request }), 'data'), 'x'));
    const bitcoin = await ask(onDemand({ keywords: ['#bitcoin'], limit: 1000 }));
    const ethereum = await ask(onDemand({ keywords: ['#ethereum'], limit: 1000 }));
    const either = await ask(
      onDemand({ keywords: ['#bitcoin', '#ethereum'], keyword_mode: 'any', limit: 1000 }),
    );
    expect(Math.min(bitcoin.length, ethereum.length)).toBeGreaterThan(0);
    expect(new Set(either)).toEqual(new Set([...bitcoin, ...ethereum]));
    expect(either.length).toBeGreaterThan(Math.max(bitcoin.length, ethereum.length));

    const target = holdings.find((item) => item.source === 'X')!;
    expect(await ask(onDemand({ url: target.uri }))).toEqual([target.uri]);
  });

  it('reports an index, as a JSON string, of exactly the source, label and hour of its items', async () => {
    const index = readIndex(await call(devnet.miners[2], 'GetMinerIndex', { version: 4 }));
    const expected = new Set<string>();
    for (const item of devnet.corpus.holdingsOf(2)) {
      expected.add(`${sourceIdOf(item)}|${item.label}|${timeBucketId(new Date(item.datetime))}`);
    }
    const reported: string[] = [];
    for (const [sourceId, labels] of Object.entries(index.sources)) {
      for (const entry of labels ?? []) {
        expect(entry.sizes_bytes).toHaveLength(entry.time_bucket_ids.length);
        expect(entry.sizes_bytes.every((size) => size > 0)).toBe(true);
        for (const bucket of entry.time_bucket_ids)
          reported.push(`${sourceId}|${entry.label}|${bucket}`);
      }
    }
    expect(reported).toHaveLength(expected.size);
    expect(new Set(reported)).toEqual(expected);
    expect(index.sources['2']?.some((entry) => entry.label === null)).toBe(true);
  });

  it('returns the entities of a bucket, whose honest sizes add up to the index', async () => {
    const miner = devnet.miners[2];
    const index = readIndex(await call(miner, 'GetMinerIndex', { version: 4 }));
    const subreddit = index.sources['1']?.[0]?.label ?? 'r/none';
    // Labels are matched without regard to case.
    const picks = [
      { source: 2, label: '#bitcoin', wire: { value: '#BITCOIN' } },
      { source: 2, label: null, wire: null },
      { source: 1, label: subreddit, wire: { value: subreddit } },
    ];
    for (const { source, label, wire } of picks) {
      const entry = index.sources[String(source)]?.find((candidate) => candidate.label === label);
      if (!entry) throw new Error(`miner 2 reports no bucket of ${source} ${label}`);
      const timeBucket = entry.time_bucket_ids[0];
      const answer = await call(miner, 'GetDataEntityBucket', {
        version: 4,
        data_entity_bucket_id: {
          time_bucket: { id: timeBucket },
          source,
          label: wire,
        },
      });
      const entities = field(answer, 'data_entities') as { content_size_bytes: number }[];
      const asked = sourceOfId(source)!;
      const items = decode(entities, asked);
      const held = devnet.corpus
        .holdingsOf(2)
        .filter(
          (item) =>
            item.source === toSourceName(asked) &&
            item.label === label &&
            timeBucketId(new Date(item.datetime)) === timeBucket,
        );
      expect(uris(items).sort()).toEqual(uris(held).sort());
      const total = entities.reduce((sum, entity) => sum + entity.content_size_bytes, 0);
      expect(total).toBe(entry.sizes_bytes[0]);
    }

    const empty = await call(miner, 'GetDataEntityBucket', {
      version: 4,
      data_entity_bucket_id: { time_bucket: { id: 1 }, source: 2, label: null },
    });
    expect(field(empty, 'data_entities')).toEqual([]);
  });

  it('fails an index request without a version, and sends an old version no index', async () => {
    const miner = devnet.miners[0];
    const missing = await call(miner, 'GetMinerIndex', {});
    expect(missing.status).toBe(500);
    expect(missing.body).toEqual({ message: expect.any(String) });
    const old = await call(miner, 'GetMinerIndex', { version: 3 });
    expect(old.status).toBe(200);
    expect(old.body).toHaveProperty('compressed_index_serialized', null);
  });

  // As an axon does: its dependency builds the synapse from the body, and the model's error
  // reaches the middleware, a 500.
  it('refuses inputs of the wrong type or out of bounds with 500', async () => {
    const miner = devnet.miners[0];
    const refused: [string, Record<string, unknown>][] = [
      ['OnDemandRequest', onDemand({ limit: 0 })],
      ['OnDemandRequest', onDemand({ source: 3 })],
      ['OnDemandRequest', { ...onDemand({}), start_date: 20240520 }],
      ['OnDemandRequest', { ...onDemand({}), keyword_mode: 'some' }],
      ['GetMinerIndex', { version: 'four' }],
      [
        'GetDataEntityBucket',
        { data_entity_bucket_id: { time_bucket: { id: 480_000 }, source: 3, label: null } },
      ],
      ['GetDataEntityBucket', { data_entity_bucket_id: { time_bucket: 480_000, source: 2 } }],
    ];
    for (const [synapse, fields] of refused) {
      const answer = await call(miner, synapse, fields);
      expect({ synapse, fields, status: answer.status }).toEqual({ synapse, fields, status: 500 });
      expect(answer.body).toEqual({ message: expect.stringMatching(/^Internal Server Error: /) });
    }
  });

  it('counts and records every call, refused ones included, with caller and status', async () => {
    const miner = devnet.miners[0];
    const stranger = Sr25519Keypair.fromUri('//Stranger');
    const before = devnet.requestCounts(0);
    const seen = devnet.calls(0).length;
    await call(miner, 'GetMinerIndex', { version: 4 });
    await call(miner, 'GetMinerIndex', { version: 4 }, stranger);
    await call(miner, 'Nope', {});
    expect(devnet.requestCounts(0)).toEqual({ ...before, GetMinerIndex: before.GetMinerIndex + 2 });
    expect(devnet.calls(0).slice(seen)).toEqual([
      { synapse: 'GetMinerIndex', caller: gateway.address, status: 200, at: expect.any(Number) },
      { synapse: 'GetMinerIndex', caller: stranger.address, status: 403, at: expect.any(Number) },
      { synapse: 'Nope', caller: gateway.address, status: 404, at: expect.any(Number) },
    ]);
    expect(() => devnet.requestCounts(9)).toThrow();
    expect(() => devnet.calls(9)).toThrow();
  });

  it('counts calls and 403 refusals per synapse for tests, and forgets them on reset', async () => {
    const miner = devnet.miners[1];
    const stranger = Sr25519Keypair.fromUri('//Stranger');
    devnet.resetCounts(1);
    await call(miner, 'GetMinerIndex', { version: 4 });
    await call(miner, 'GetMinerIndex', { version: 4 }, stranger);
    await call(miner, 'GetContentsByBuckets', { version: 4, data_entity_bucket_ids: [] }, stranger);
    await call(miner, 'Nope', {});

    expect(devnet.callCounts(1)).toEqual({
      GetMinerIndex: { calls: 2, refused: 1 },
      GetDataEntityBucket: { calls: 0, refused: 0 },
      GetContentsByBuckets: { calls: 1, refused: 1 },
      OnDemandRequest: { calls: 0, refused: 0 },
    });
    expect(devnet.callCounts(0).GetMinerIndex.calls).toBeGreaterThan(0);
    devnet.resetCounts();
    for (const uid of [0, 1]) {
      expect(devnet.calls(uid)).toEqual([]);
      expect(devnet.callCounts(uid).GetMinerIndex).toEqual({ calls: 0, refused: 0 });
      expect(devnet.requestCounts(uid).GetMinerIndex).toBe(0);
    }
    expect(() => devnet.callCounts(9)).toThrow();
    expect(() => devnet.resetCounts(9)).toThrow();
  });

  it('exposes which miners hold an item', () => {
    const item = devnet.corpus.holdingsOf(0)[0];
    expect(devnet.corpus.holdersOf(item.uri)).toContain(0);
    expect(devnet.corpus.holdersOf('https://x.com/nobody/status/1')).toEqual([]);
  });

  it('answers 404 to OnDemandRequest on every miner when stored-only, whatever the behaviour', async () => {
    const stored = await startDevnet({
      miners: [{}, { behaviour: { fabricate: true, strictBudget: false } }],
      seed: SEED,
      now,
      validatorHotkeys: [gateway.address],
      corpusSize: { x: 60, reddit: 40 },
      storedOnly: true,
    });
    try {
      expect(stored.storedOnly).toBe(true);
      stored.setBehaviour(0, { noOnDemand: false });
      for (const miner of stored.miners) {
        expect((await call(miner, 'OnDemandRequest', { ...onDemand({}) })).status).toBe(404);
        expect((await call(miner, 'GetMinerIndex', { version: 4 })).status).toBe(200);
        const bulk = await call(miner, 'GetContentsByBuckets', {
          version: 4,
          data_entity_bucket_ids: [],
        });
        expect(bulk.status).toBe(200);
      }
      expect(devnet.storedOnly).toBe(false);
    } finally {
      await stored.stop();
    }
  });

  it('refuses to bind anything but loopback', async () => {
    await expect(startDevnet({ miners: 1, host: '0.0.0.0' })).rejects.toThrow(/loopback/);
  });

  // The last of two miners on 65536: refused before anything is bound, saying the bound.
  it('refuses a base port that would put a miner past 65535', async () => {
    await expect(startDevnet({ miners: 2, basePort: 65_535 })).rejects.toThrow(
      'base port must be an integer between 0 and 65534 for 2 miners, got 65535',
    );
  });
});

describe('Devnet.advanceClock', () => {
  let devnet: Devnet;
  let miner: DevnetMiner;
  let offset = 0;

  const askIndex = (): Promise<AxonAnswer> =>
    callAxon({
      url: miner.url,
      hotkey: miner.hotkey,
      synapse: 'GetMinerIndex',
      fields: { version: 4 },
      signer: gateway,
      // Nonces must be fresh on the devnet's clock, not on ours.
      nowMs: Date.now() + offset,
    });
  const advance = (ms: number): void => {
    offset += ms;
    devnet.advanceClock(ms);
  };

  beforeAll(async () => {
    devnet = await startDevnet({
      miners: 1,
      seed: 2,
      now,
      validatorHotkeys: [gateway.address],
      corpusSize: { x: 50, reddit: 50 },
    });
    miner = devnet.miners[0];
  });

  afterAll(async () => {
    await devnet?.stop();
  });

  it("opens a new call window after an hour on the devnet's clock", async () => {
    const statuses = async (count: number): Promise<number[]> => {
      const results: number[] = [];
      for (let sent = 0; sent < count; sent++) results.push((await askIndex()).status);
      return results;
    };
    expect(await statuses(3)).toEqual([200, 200, 403]);
    advance(HOUR_MS - 60_000);
    expect(await statuses(1)).toEqual([403]);
    advance(60_000);
    expect(await statuses(3)).toEqual([200, 200, 403]);
    const last = devnet.calls(0).at(-1)!;
    expect(last.at).toBeGreaterThanOrEqual(Date.now() + offset - 5_000);
  });

  // neurons/miner.py default_blacklist: the counters are cleared by the first call an hour or
  // more after the last clearing, and that call starts the next window.
  it('resets every counter together at the first call an hour after the last reset, which starts the next window', async () => {
    const other = await startDevnet({
      miners: 1,
      seed: 2,
      now,
      validatorHotkeys: [gateway.address],
      corpusSize: { x: 20, reddit: 20 },
    });
    let shift = 0;
    const ask = async (synapse: string, fields: Record<string, unknown>): Promise<number> =>
      (
        await callAxon({
          url: other.miners[0].url,
          hotkey: other.miners[0].hotkey,
          synapse,
          fields,
          signer: gateway,
          nowMs: Date.now() + shift,
        })
      ).status;
    const index = () => ask('GetMinerIndex', { version: 4 });
    const contents = () => ask('GetContentsByBuckets', { version: 4, data_entity_bucket_ids: [] });
    try {
      const wait = (ms: number) => {
        shift += ms;
        other.advanceClock(ms);
      };
      // Idle through the first hour: the first call, 90 minutes in, starts the second window.
      wait(90 * 60_000);
      expect([await index(), await index(), await index()]).toEqual([200, 200, 403]);
      const bulk: number[] = [];
      for (let sent = 0; sent < 11; sent++) bulk.push(await contents());
      expect(bulk).toEqual([...Array<number>(10).fill(200), 403]);
      // Two hours after the start that window is half an hour old: still counting.
      wait(30 * 60_000 + 2_000);
      expect([await index(), await contents()]).toEqual([403, 403]);
      // An hour after the call that started it, the next call clears every counter at once.
      wait(30 * 60_000);
      expect([await index(), await contents()]).toEqual([200, 200]);
      expect(other.callCounts(0).GetMinerIndex).toEqual({ calls: 5, refused: 2 });
      expect(other.callCounts(0).GetContentsByBuckets).toEqual({ calls: 13, refused: 2 });
    } finally {
      await other.stop();
    }
  });

  it("judges nonces by the devnet's clock", async () => {
    advance(HOUR_MS);
    const fields = { version: 4, source: 2, limit: 1 };
    const stale = await sendSigned(signedAt(miner, 'OnDemandRequest', fields, Date.now()));
    expect(stale.status).toBe(401);
    expect(stale.body).toEqual({ message: expect.stringContaining('Nonce is too old') });
    const fresh = await sendSigned(signedAt(miner, 'OnDemandRequest', fields, Date.now() + offset));
    expect(fresh.status).toBe(200);
  });
});
