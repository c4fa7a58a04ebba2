import { OnDemandRequestFields } from '../network/sn13/messages';
import { randomUUID } from 'node:crypto';
import { buildSignedRequest, SignedRequest, signatureMessage } from '../network/bittensor/dendrite';
import { cryptoReady, Sr25519Keypair } from '../network/bittensor/keypair';
import { Source } from '../common/source';
import { DEFAULT_MINER_MAX_INDEX_RESPONSE_BYTES } from '../config/miner-answer-sizes';
import { bucketStart, CompressedMinerIndex, DataItem } from '../network/protocol';
import { sourceOfId } from '../network/sources';
import { compileQuery } from '../network/query-matcher';
import { convertContent, convertEntity, WireDataEntity } from '../network/sn13/entities';
import { MinerBehaviour } from './behaviour';
import { AxonAnswer, AxonCall, callAxon, sendSigned } from './axon-client';
import { Devnet, DevnetMiner, startDevnet } from './devnet';
import { devnetKeyUri } from './metagraph';
import { BROKEN_TEXT } from './miner-faults';
import { MinerServer } from './miner-server';
import { exchange, parse } from '../../test/support/raw-http';

const now = new Date('2024-06-01T00:00:00Z');
const SEED = 5;
const HONEST = 0;
const POLICY = 1;
const FAULTY = 2;
const SIXTEEN_MB = 16 * 1024 * 1024;
const gateway = Sr25519Keypair.fromUri('//Gateway');
const stranger = Sr25519Keypair.fromUri('//Stranger');
// Budget tests use keys of their own, so that their spent calls limit no other test.
const budgetA = Sr25519Keypair.fromUri('//Gateway//budget-a');
const budgetB = Sr25519Keypair.fromUri('//Gateway//budget-b');
const budgetC = Sr25519Keypair.fromUri('//Gateway//budget-c');
const INDEX = { version: 4 };

interface WireBucket {
  time_bucket: { id: number };
  source: 1 | 2;
  label: { value: string } | null;
}

function query(overrides: Partial<OnDemandRequestFields> = {}): OnDemandRequestFields {
  return {
    version: 4,
    source: 2,
    usernames: [],
    keywords: [],
    keyword_mode: 'all',
    url: null,
    start_date: null,
    end_date: null,
    limit: 1000,
    ...overrides,
  };
}

function matcherOf(request: OnDemandRequestFields): ReturnType<typeof compileQuery> {
  return compileQuery({ ...request, source: sourceOfId(request.source)! });
}

function call(
  miner: DevnetMiner,
  synapse: string,
  fields: object,
  options: Partial<AxonCall> = {},
): Promise<AxonAnswer> {
  return callAxon({
    url: miner.url,
    hotkey: miner.hotkey,
    synapse,
    fields: { ...fields },
    signer: gateway,
    ...options,
  });
}

/** A request whose nonce is exactly `nonceMs` (callAxon's nonces never go back in time). */
function signedAt(miner: DevnetMiner, fields: object, nonceMs: number): SignedRequest {
  const { hostname, port } = new URL(miner.url);
  return buildSignedRequest(
    'OnDemandRequest',
    { ...fields },
    12,
    { ip: hostname, port: Number(port), hotkey: miner.hotkey },
    { hotkey: gateway.address, nonce: BigInt(nonceMs) * 1_000_000n, uuid: randomUUID() },
    (message) => gateway.sign(message),
  );
}

function withHeaders(request: SignedRequest, headers: Record<string, string>): SignedRequest {
  return { ...request, headers: { ...request.headers, ...headers } };
}

function output(answer: AxonAnswer, name: string): unknown {
  expect(answer.status).toBe(200);
  return (answer.body as Record<string, unknown>)[name];
}

/**
 * A stored record's url and its own time (X `timestamp`, Reddit `createdAt`) as sent, for records
 * the gateway would not read (a real post re-dated).
 */
function placeOf(content: string): { uri: string; datetime: string } {
  const record = JSON.parse(content) as { url: string; timestamp?: string; createdAt?: string };
  return { uri: record.url, datetime: (record.timestamp ?? record.createdAt)! };
}

/** The entities that convert to items, and how many did not. */
function decode(entities: unknown, source: Source): { items: DataItem[]; broken: number } {
  if (!Array.isArray(entities)) throw new Error(`not a list of entities: ${String(entities)}`);
  const items: DataItem[] = [];
  for (const entity of entities) {
    const converted = convertEntity(entity, source);
    if (converted) items.push(converted.item);
  }
  return { items, broken: entities.length - items.length };
}

describe(MinerServer.name, () => {
  let devnet: Devnet;
  let honest: DevnetMiner;
  let policy: DevnetMiner;
  let faulty: DevnetMiner;
  let corpusUris: Set<string>;
  let honestIndex: CompressedMinerIndex;

  const onDemand = async (request: OnDemandRequestFields): Promise<DataItem[]> => {
    const { items, broken } = decode(
      output(await call(faulty, 'OnDemandRequest', request), 'data'),
      sourceOfId(request.source)!,
    );
    expect(broken).toBe(0);
    return items;
  };

  const rawIndex = async (): Promise<unknown> =>
    JSON.parse(
      output(await call(faulty, 'GetMinerIndex', INDEX), 'compressed_index_serialized') as string,
    );

  const minerIndex = async (): Promise<CompressedMinerIndex> =>
    (await rawIndex()) as CompressedMinerIndex;

  const firstBucket = (): object => {
    const entry = honestIndex.sources['2']?.find((candidate) => candidate.label === '#bitcoin');
    if (!entry) throw new Error('no #bitcoin bucket');
    return {
      version: 4,
      data_entity_bucket_id: {
        time_bucket: { id: entry.time_bucket_ids[entry.time_bucket_ids.length - 1] },
        source: 2,
        label: { value: '#bitcoin' },
      },
    };
  };

  const bucketEntities = async (): Promise<unknown> =>
    output(await call(faulty, 'GetDataEntityBucket', firstBucket()), 'data_entities');

  /** The newest `count` buckets of a label in the honest index, as wire bucket ids. */
  const bucketsOf = (source: 1 | 2, label: string, count: number): WireBucket[] => {
    const entry = honestIndex.sources[String(source)]?.find((each) => each.label === label);
    if (!entry) throw new Error(`no ${label} bucket`);
    return entry.time_bucket_ids
      .slice(-count)
      .map((id) => ({ time_bucket: { id }, source, label: { value: label } }));
  };

  /** The contents the faulty miner sends for `buckets`, per bucket, decoded (or undefined). */
  const contentsOf = async (buckets: WireBucket[]) => {
    const pairs = output(
      await call(faulty, 'GetContentsByBuckets', { version: 4, data_entity_bucket_ids: buckets }),
      'bucket_ids_to_contents',
    ) as [WireBucket, string[]][];
    expect(pairs.map(([id]) => id)).toEqual(buckets);
    return pairs.map(([id, contents]) => ({
      id,
      raw: contents,
      records: contents.map((content) => convertContent(content, id.source === 2 ? 'x' : 'reddit')),
    }));
  };

  /** Faults only: the call budget has tests of its own and would cap these. */
  const misbehave = (behaviour: MinerBehaviour): void =>
    devnet.setBehaviour(FAULTY, { ...behaviour, strictBudget: false });

  beforeAll(async () => {
    await cryptoReady();
    devnet = await startDevnet({
      miners: 3,
      seed: SEED,
      now,
      validatorHotkeys: [gateway.address, budgetA.address, budgetB.address, budgetC.address],
      corpusSize: { x: 900, reddit: 600 },
    });
    [honest, policy, faulty] = [HONEST, POLICY, FAULTY].map((uid) => devnet.miners[uid]);
    corpusUris = new Set(devnet.corpus.items.map((item) => item.uri));
    misbehave({});
    honestIndex = await minerIndex();
  });

  afterEach(() => {
    misbehave({});
    devnet.setBehaviour(POLICY, {});
  });

  afterAll(async () => {
    await devnet?.stop();
  });

  it('serves stored records by bucket (GetContentsByBuckets), none for a null label or over 100 ids', async () => {
    const { data_entity_bucket_id: labelled } = firstBucket() as { data_entity_bucket_id: object };
    const unlabelled = { ...labelled, label: null };
    const pairs = output(
      await call(faulty, 'GetContentsByBuckets', {
        version: 4,
        data_entity_bucket_ids: [labelled, unlabelled],
      }),
      'bucket_ids_to_contents',
    ) as [unknown, string[]][];
    expect(pairs.map(([id]) => id)).toEqual([labelled, unlabelled]);
    const entities = (await bucketEntities()) as { content: string }[];
    expect(pairs[0][1]).toEqual(entities.map((entity) => entity.content));
    expect(pairs[0][1].length).toBeGreaterThan(0);
    expect(pairs[1][1]).toEqual([]);

    const tooMany = output(
      await call(faulty, 'GetContentsByBuckets', {
        version: 4,
        data_entity_bucket_ids: Array.from({ length: 101 }, () => labelled),
      }),
      'bucket_ids_to_contents',
    );
    expect(tooMany).toEqual([]);
  });

  describe('checks every call as an axon does', () => {
    const fields = query({ limit: 1 });

    it('answers an unknown synapse 404 with a message', async () => {
      const answer = await call(honest, 'GetEverything', {});
      expect(answer.status).toBe(404);
      expect(answer.body).toEqual({ message: expect.stringContaining('GetEverything') });
    });

    it('answers unreadable headers 400', async () => {
      const answer = await call(honest, 'OnDemandRequest', fields, {
        tamper: (request) => withHeaders(request, { bt_header_dendrite_nonce: 'soon' }),
      });
      expect(answer.status).toBe(400);
    });

    it('answers 403 to a key outside the metagraph, before checking its signature', async () => {
      const signed = await call(honest, 'OnDemandRequest', fields, { signer: stranger });
      const unsigned = await call(honest, 'OnDemandRequest', fields, {
        signer: stranger,
        tamper: (request) => withHeaders(request, { bt_header_dendrite_signature: '0x00' }),
      });
      for (const answer of [signed, unsigned]) {
        expect(answer.status).toBe(403);
        expect(answer.body).toEqual({ message: expect.stringContaining('Unrecognized hotkey') });
      }
    });

    it('answers 403 to a neuron without a validator permit', async () => {
      const miner = Sr25519Keypair.fromUri(devnetKeyUri(SEED, 'miner', POLICY));
      const answer = await call(honest, 'OnDemandRequest', fields, { signer: miner });
      expect(answer.status).toBe(403);
      expect(answer.body).toEqual({ message: expect.stringContaining('not a validator') });
    });

    it('answers 401 to a changed signature or a changed body hash header', async () => {
      const flipLast = (signature: string): string =>
        signature.slice(0, -1) + (signature.endsWith('0') ? '1' : '0');
      const changes: Record<string, string>[] = [
        { bt_header_dendrite_signature: '' },
        { computed_body_hash: 'a'.repeat(64) },
      ];
      const tampered = [
        await call(honest, 'OnDemandRequest', fields, {
          tamper: (request) =>
            withHeaders(request, {
              bt_header_dendrite_signature: flipLast(request.headers.bt_header_dendrite_signature),
            }),
        }),
        ...(await Promise.all(
          changes.map((change) =>
            call(honest, 'OnDemandRequest', fields, {
              tamper: (request) => withHeaders(request, change),
            }),
          ),
        )),
      ];
      for (const answer of tampered) {
        expect(answer.status).toBe(401);
        expect(answer.body).toEqual({ message: expect.stringContaining('Signature mismatch') });
      }
    });

    it("answers 500 to a body hash that is signed but wrong, and FastAPI's 422 to a body that is not JSON", async () => {
      const wrongHash = 'b'.repeat(64);
      const hashed = await call(honest, 'OnDemandRequest', fields, {
        tamper: (request) => {
          const { headers } = request;
          const message = signatureMessage(
            headers.bt_header_dendrite_nonce,
            headers.bt_header_dendrite_hotkey,
            honest.hotkey,
            headers.bt_header_dendrite_uuid,
            wrongHash,
          );
          return withHeaders(request, {
            computed_body_hash: wrongHash,
            bt_header_dendrite_signature: gateway.sign(message),
          });
        },
      });
      expect(hashed.status).toBe(500);
      expect(hashed.body).toEqual({ message: expect.stringContaining('Hash mismatch') });
      // The body is not signed: only the checks after the signature see it.
      const garbled = await call(honest, 'OnDemandRequest', fields, {
        tamper: (request) => ({ ...request, body: '{not json' }),
      });
      expect(garbled.status).toBe(422);
      expect(garbled.body).toEqual({ detail: [expect.objectContaining({ type: 'json_invalid' })] });
    });

    it('answers 401 to the replay of a request it answered', async () => {
      const first = await call(honest, 'OnDemandRequest', fields);
      expect(first.status).toBe(200);
      const replay = await sendSigned(first.request);
      expect(replay.status).toBe(401);
      expect(replay.body).toEqual({ message: expect.stringContaining('Nonce is too old') });
    });

    it('answers 401 to a nonce from an hour ago, and takes the same call with a fresh one', async () => {
      const stale = await sendSigned(signedAt(honest, fields, Date.now() - 60 * 60_000));
      expect(stale.status).toBe(401);
      expect(stale.body).toEqual({ message: expect.stringContaining('Nonce is too old') });
      expect((await sendSigned(signedAt(honest, fields, Date.now()))).status).toBe(200);
    });

    // Node's parser takes these request lines, WHATWG URL does not: read as a URL, each threw in
    // the request listener, an uncaught error that ended npm start's gateway, the devnet's host.
    it.each(['http://[', 'http://a:99999/x', 'http://%zz/'])(
      'answers 400 to the request target %s, as uvicorn does, and goes on serving',
      async (target) => {
        const answer = await exchange(Number(new URL(honest.url).port), (socket) =>
          socket.write(
            `POST ${target} HTTP/1.1\r\nHost: miner\r\nContent-Length: 0\r\nConnection: close\r\n\r\n`,
          ),
        );
        expect(parse(answer)).toMatchObject({
          status: 400,
          body: { message: 'Invalid HTTP request received.' },
        });
        expect((await call(honest, 'OnDemandRequest', fields)).status).toBe(200);
      },
    );

    it('answers 405 to a signed call that is not a POST', async () => {
      const { url, headers, body } = signedAt(honest, fields, Date.now());
      const response = await fetch(url, { method: 'PUT', headers, body });
      expect(response.status).toBe(405);
      expect(response.headers.get('allow')).toBe('POST');
    });
  });

  describe('policies', () => {
    it('allows each validator 2 index and 2 bucket calls per window by default, 403 beyond', async () => {
      expect(devnet.miners[POLICY].behaviour.strictBudget).toBeUndefined();
      const statuses = async (synapse: string, fields: object, signer: Sr25519Keypair) => {
        const results: number[] = [];
        for (let sent = 0; sent < 3; sent++)
          results.push((await call(policy, synapse, fields, { signer })).status);
        return results;
      };
      expect(await statuses('GetMinerIndex', INDEX, budgetA)).toEqual([200, 200, 403]);
      expect(await statuses('GetDataEntityBucket', firstBucket(), budgetA)).toEqual([
        200, 200, 403,
      ]);
      const refused = await call(policy, 'GetMinerIndex', INDEX, { signer: budgetA });
      expect(refused.body).toEqual({ message: expect.stringContaining('request limit') });
      // Per validator, and on-demand requests are not limited.
      expect((await call(policy, 'GetMinerIndex', INDEX, { signer: budgetB })).status).toBe(200);
      expect(await statuses('OnDemandRequest', query({ limit: 1 }), budgetA)).toEqual([
        200, 200, 200,
      ]);
    });

    it('allows each validator 10 GetContentsByBuckets calls per window, 403 beyond', async () => {
      const fields = { version: 4, data_entity_bucket_ids: bucketsOf(2, '#bitcoin', 2) };
      const results: number[] = [];
      for (let sent = 0; sent < 12; sent++)
        results.push(
          (await call(policy, 'GetContentsByBuckets', fields, { signer: budgetC })).status,
        );
      expect(results).toEqual([...Array<number>(10).fill(200), 403, 403]);
      const refused = await call(policy, 'GetContentsByBuckets', fields, { signer: budgetC });
      expect(refused.body).toEqual({ message: expect.stringContaining('request limit') });
      expect(devnet.callCounts(POLICY).GetContentsByBuckets.refused).toBeGreaterThanOrEqual(3);
    });

    it('lets every call through with no-strict-budget', async () => {
      devnet.setBehaviour(POLICY, { strictBudget: false });
      for (let sent = 0; sent < 5; sent++) {
        expect((await call(policy, 'GetMinerIndex', INDEX)).status).toBe(200);
        expect((await call(policy, 'GetDataEntityBucket', firstBucket())).status).toBe(200);
      }
    });

    it('answers 404 to on-demand requests only with no-ondemand', async () => {
      devnet.setBehaviour(POLICY, { noOnDemand: true, strictBudget: false });
      const refused = await call(policy, 'OnDemandRequest', query({ limit: 1 }));
      expect(refused.status).toBe(404);
      expect(refused.body).toEqual({ message: expect.stringContaining('OnDemandRequest') });
      expect((await call(policy, 'GetMinerIndex', INDEX)).status).toBe(200);
      expect((await call(policy, 'GetDataEntityBucket', firstBucket())).status).toBe(200);
    });

    it('answers 403 to every caller with blacklist-all', async () => {
      devnet.setBehaviour(POLICY, { blacklistAll: true, strictBudget: false });
      const validator = Sr25519Keypair.fromUri(devnetKeyUri(SEED, 'validator', 3));
      for (const signer of [gateway, validator]) {
        for (const [synapse, fields] of [
          ['GetMinerIndex', INDEX],
          ['OnDemandRequest', query({ limit: 1 })],
        ] as const) {
          expect((await call(policy, synapse, fields, { signer })).status).toBe(403);
        }
      }
    });
  });

  describe('faults', () => {
    it('hangs without answering', async () => {
      misbehave({ hang: true });
      const started = Date.now();
      const error: unknown = await call(faulty, 'OnDemandRequest', query(), {
        signal: AbortSignal.timeout(300),
      }).then(
        () => new Error('answered'),
        (failure: unknown) => failure,
      );
      expect((error as Error).name).toBe('TimeoutError');
      expect(Date.now() - started).toBeGreaterThanOrEqual(250);
    });

    it('answers 500', async () => {
      misbehave({ http500: true });
      const answer = await call(faulty, 'GetMinerIndex', INDEX);
      expect(answer.status).toBe(500);
      expect(answer.body).toEqual({ message: expect.any(String) });
    });

    it('answers 200 with a body that is not JSON', async () => {
      misbehave({ malformedJson: true });
      for (const [synapse, fields] of [
        ['OnDemandRequest', query()],
        ['GetMinerIndex', INDEX],
        ['GetDataEntityBucket', firstBucket()],
        [
          'GetContentsByBuckets',
          { version: 4, data_entity_bucket_ids: bucketsOf(2, '#bitcoin', 1) },
        ],
      ] as const) {
        const answer = await call(faulty, synapse, fields);
        expect(answer.status).toBe(200);
        expect(answer.text.length).toBeGreaterThan(0);
        expect(() => JSON.parse(answer.text) as unknown).toThrow();
      }
    });

    it('streams a valid-looking JSON body beyond 16 MB, an index beyond its own cap', async () => {
      misbehave({ oversize: true });
      for (const [synapse, fields, name] of [
        ['OnDemandRequest', query({ limit: 1 }), 'data'],
        ['GetMinerIndex', INDEX, 'compressed_index_serialized'],
        ['GetDataEntityBucket', firstBucket(), 'data_entities'],
        [
          'GetContentsByBuckets',
          { version: 4, data_entity_bucket_ids: bucketsOf(2, '#bitcoin', 1) },
          'bucket_ids_to_contents',
        ],
      ] as const) {
        const answer = await call(faulty, synapse, fields, { timeoutSeconds: 10 });
        expect(answer.status).toBe(200);
        expect(Buffer.byteLength(answer.text)).toBeGreaterThan(
          synapse === 'GetMinerIndex' ? DEFAULT_MINER_MAX_INDEX_RESPONSE_BYTES : SIXTEEN_MB,
        );
        const value = output(answer, name);
        if (typeof value === 'string') expect(() => JSON.parse(value) as unknown).not.toThrow();
        else expect(Array.isArray(value)).toBe(true);
      }
    });

    it('sends entities and an index with missing or wrong-typed fields', async () => {
      const honestAnswer = await onDemand(query({ keywords: ['#crypto'] }));
      misbehave({ wrongSchema: true });
      const answer = await call(faulty, 'OnDemandRequest', query({ keywords: ['#crypto'] }));
      const broken = decode(output(answer, 'data'), 'x');
      expect(honestAnswer.length).toBeGreaterThan(7);
      expect(broken).toEqual({ items: [], broken: honestAnswer.length });

      const index = (await rawIndex()) as { sources: Record<string, unknown[]> };
      expect(index.sources['2']).toContainEqual(expect.objectContaining({ label: 42 }));
      const entities = decode(await bucketEntities(), 'x');
      expect(entities.items).toEqual([]);
      expect(entities.broken).toBeGreaterThan(0);
    });

    it('fabricates entities that break the query, under made-up uris', async () => {
      misbehave({ fabricate: true });
      const author = devnet.corpus.holdingsOf(FAULTY).find((item) => item.source === 'X');
      const requests = [
        query({ keywords: ['#bitcoin', 'halving'] }),
        query({ usernames: [author?.source === 'X' ? author.user.username : 'x'], limit: 20 }),
        query({ start_date: '2024-05-20', end_date: '2024-05-21', keywords: ['bitcoin'] }),
        query({ source: 1, keywords: ['/bitcoin'], limit: 10 }),
        query({ source: 1, usernames: ['anyone'], start_date: '2024-05-25T00:00:00' }),
      ];
      for (const request of requests) {
        const items = await onDemand(request);
        const matcher = matcherOf(request);
        expect(items.length).toBeGreaterThan(0);
        expect(items.length).toBeLessThanOrEqual(request.limit);
        for (const item of items) {
          expect(matcher.matches(item)).toBe(false);
          expect(corpusUris.has(item.uri)).toBe(false);
        }
      }
      // Nothing to break in an open query: the items are dated in the future instead.
      for (const item of await onDemand(query({ limit: 5 }))) {
        expect(corpusUris.has(item.uri)).toBe(false);
        expect(Date.parse(item.datetime)).toBeGreaterThan(now.getTime());
      }
    });

    it('fabricates index entries and bucket entities', async () => {
      misbehave({ fabricate: true });
      const index = await minerIndex();
      expect(index.sources['2']?.map((entry) => entry.label)).toContain('#fabricated_data');
      const { items, broken } = decode(await bucketEntities(), 'x');
      expect(broken).toBe(0);
      expect(items.some((item) => corpusUris.has(item.uri))).toBe(true);
      expect(items.some((item) => !corpusUris.has(item.uri))).toBe(true);
    });

    it('returns only about half of its matching items', async () => {
      const honestAnswer = await onDemand(query());
      misbehave({ partial: true });
      const partial = await onDemand(query());
      const honestUris = new Set(honestAnswer.map((item) => item.uri));
      expect(partial.every((item) => honestUris.has(item.uri))).toBe(true);
      expect(partial.length).toBeGreaterThan(honestAnswer.length * 0.3);
      expect(partial.length).toBeLessThan(honestAnswer.length * 0.7);
    });

    it('overclaims index sizes but keeps entity sizes honest', async () => {
      misbehave({ overclaimSizes: 3 });
      const index = await minerIndex();
      const honestSizes = honestIndex.sources['2']?.flatMap((entry) => entry.sizes_bytes) ?? [];
      const claimed = index.sources['2']?.flatMap((entry) => entry.sizes_bytes) ?? [];
      expect(claimed).toEqual(honestSizes.map((size) => size * 3));
      const entities = (await bucketEntities()) as {
        content: string;
        content_size_bytes: number;
      }[];
      expect(entities.length).toBeGreaterThan(0);
      for (const entity of entities) {
        expect(entity.content_size_bytes).toBe(Buffer.byteLength(entity.content));
      }
    });

    it('applies faults only to the chosen endpoints', async () => {
      misbehave({ http500: true, endpoints: ['GetMinerIndex'] });
      expect((await call(faulty, 'GetMinerIndex', INDEX)).status).toBe(500);
      expect((await call(faulty, 'OnDemandRequest', query())).status).toBe(200);
      expect((await call(faulty, 'GetDataEntityBucket', firstBucket())).status).toBe(200);
    });

    describe('on the bulk contents call (GetContentsByBuckets)', () => {
      const X_BUCKETS = () => bucketsOf(2, '#bitcoin', 30);
      const REDDIT_BUCKETS = () => bucketsOf(1, 'r/bitcoin', 30);
      const hourOf = (id: WireBucket) => {
        const start = bucketStart(id.time_bucket.id).getTime();
        return (time: string) => Date.parse(time) >= start && Date.parse(time) < start + 3_600_000;
      };

      it('sends honest records of the bucket, its hour and label, without a fault', async () => {
        for (const bucket of await contentsOf([...X_BUCKETS(), ...REDDIT_BUCKETS()])) {
          const inHour = hourOf(bucket.id);
          for (const record of bucket.records) {
            expect(record).toBeDefined();
            expect(corpusUris.has(record!.item.uri)).toBe(true);
            expect(inHour(record!.item.datetime)).toBe(true);
          }
        }
      });

      it('sends only about half of the records with partial: far less than the index claims', async () => {
        const honestAnswer = (await contentsOf(X_BUCKETS())).flatMap((bucket) => bucket.raw);
        misbehave({ partial: true });
        const partial = (await contentsOf(X_BUCKETS())).flatMap((bucket) => bucket.raw);
        expect(partial.every((content) => honestAnswer.includes(content))).toBe(true);
        expect(partial.length).toBeGreaterThan(honestAnswer.length * 0.3);
        expect(partial.length).toBeLessThan(honestAnswer.length * 0.7);
      });

      it('dates every record outside the hour of its bucket with wrongHour, keeping real uris', async () => {
        misbehave({ wrongHour: true });
        const buckets = await contentsOf([...X_BUCKETS(), ...REDDIT_BUCKETS()]);
        expect(buckets.flatMap((bucket) => bucket.raw).length).toBeGreaterThan(10);
        for (const bucket of buckets) {
          const inHour = hourOf(bucket.id);
          for (const content of bucket.raw) {
            const record = placeOf(content);
            expect(corpusUris.has(record.uri)).toBe(true);
            expect(inHour(record.datetime)).toBe(false);
          }
          // A real X post re-dated: its id holds another time, and the gateway reads none of them.
          if (bucket.id.source === 2)
            expect(bucket.records).toEqual(bucket.raw.map(() => undefined));
        }
      });

      it('files every record under another label with wrongLabel', async () => {
        misbehave({ wrongLabel: true });
        const buckets = await contentsOf([...X_BUCKETS(), ...REDDIT_BUCKETS()]);
        expect(buckets.flatMap((bucket) => bucket.raw).length).toBeGreaterThan(10);
        for (const bucket of buckets) {
          const inHour = hourOf(bucket.id);
          for (const record of bucket.records) {
            const item = record!.item;
            expect(inHour(item.datetime)).toBe(true);
            if (item.source === 'X') {
              expect(item.tweet.hashtags[0]?.toLowerCase()).not.toBe(bucket.id.label?.value);
              expect(item.tweet.hashtags.map((tag) => tag.toLowerCase())).not.toContain('#bitcoin');
            } else {
              expect(item.communityName.toLowerCase()).not.toBe(bucket.id.label?.value);
              expect(item.uri).toContain(item.communityName);
            }
          }
        }
      });

      it('ends the text of every record in U+0000 and unpaired surrogates with brokenText', async () => {
        misbehave({ brokenText: true });
        const contents = (await contentsOf([...X_BUCKETS(), ...REDDIT_BUCKETS()])).flatMap(
          (bucket) => bucket.raw,
        );
        expect(contents.length).toBeGreaterThan(10);
        for (const content of contents) {
          const record = JSON.parse(content) as { text?: string; body?: string };
          expect((record.text ?? record.body)?.endsWith(BROKEN_TEXT)).toBe(true);
        }
      });

      it('adds made-up records, dated outside the hour, to the real ones with fabricate', async () => {
        misbehave({ fabricate: true });
        for (const bucket of await contentsOf(bucketsOf(2, '#bitcoin', 3))) {
          const inHour = hourOf(bucket.id);
          const items = bucket.records.map((record) => record!.item);
          const madeUp = items.filter((item) => !corpusUris.has(item.uri));
          expect(madeUp.length).toBeGreaterThanOrEqual(3);
          for (const item of madeUp) expect(inHour(item.datetime)).toBe(false);
          expect(items.length).toBeGreaterThan(madeUp.length);
        }
      });

      it('sends records that are not the subnet records with wrongSchema', async () => {
        misbehave({ wrongSchema: true });
        const buckets = await contentsOf(X_BUCKETS());
        const records = buckets.flatMap((bucket) => bucket.records);
        expect(records.length).toBeGreaterThan(3);
        expect(records.every((record) => record === undefined)).toBe(true);
      });

      it('still answers nothing for an unlabeled bucket, whatever the fault', async () => {
        misbehave({ fabricate: true, wrongHour: true });
        const [unlabeled] = X_BUCKETS();
        const [bucket] = await contentsOf([{ ...unlabeled, label: null }]);
        expect(bucket.raw).toEqual([]);
      });

      it('applies the faults only where the endpoints say', async () => {
        misbehave({ wrongHour: true, endpoints: ['GetDataEntityBucket'] });
        const [bucket] = await contentsOf(X_BUCKETS().slice(-1));
        expect(bucket.records.every((record) => hourOf(bucket.id)(record!.item.datetime))).toBe(
          true,
        );
        const entities = (await bucketEntities()) as WireDataEntity[];
        expect(entities.length).toBeGreaterThan(0);
        const { time_bucket: time } = (firstBucket() as { data_entity_bucket_id: WireBucket })
          .data_entity_bucket_id;
        for (const entity of entities)
          expect(Date.parse(entity.datetime)).toBeLessThan(bucketStart(time.id).getTime());
      });
    });

    it('delays answers by the configured latency', async () => {
      misbehave({ latencyMs: { min: 150, max: 200 } });
      const started = Date.now();
      expect((await call(faulty, 'GetMinerIndex', INDEX)).status).toBe(200);
      expect(Date.now() - started).toBeGreaterThanOrEqual(145);
    });

    it('refuses bad requests before any fault applies', async () => {
      misbehave({ hang: true, latencyMs: 10_000 });
      const answer = await call(faulty, 'OnDemandRequest', query({ limit: 0 }), {
        signal: AbortSignal.timeout(2000),
      });
      expect(answer.status).toBe(500);
      expect(answer.body).toEqual({
        message: 'Internal Server Error: limit must be an integer from 1 to 1000',
      });
    });

    it('refuses an invalid behaviour', () => {
      expect(() => devnet.setBehaviour(FAULTY, { faultRate: 2 })).toThrow();
      expect(() => devnet.setBehaviour(7, {})).toThrow();
    });

    it('applies faults at the configured rate, the same way for the same seed', async () => {
      const statuses = async (): Promise<number[]> => {
        const other = await startDevnet({
          miners: [{ behaviour: { http500: true, faultRate: 0.5, strictBudget: false } }],
          seed: SEED,
          now,
          validatorHotkeys: [gateway.address],
          corpusSize: { x: 20, reddit: 20 },
        });
        try {
          const results: number[] = [];
          for (let sent = 0; sent < 30; sent++) {
            results.push((await call(other.miners[0], 'GetMinerIndex', INDEX)).status);
          }
          return results;
        } finally {
          await other.stop();
        }
      };
      const first = await statuses();
      expect(first.filter((status) => status === 500).length).toBeGreaterThan(5);
      expect(first.filter((status) => status === 200).length).toBeGreaterThan(5);
      expect(await statuses()).toEqual(first);
    });
  });
});
