import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  CompressedMinerIndex,
  DataItem,
  GetDataEntityBucketResponse,
  MetagraphFile,
  OnDemandMinerRequest,
  OnDemandMinerResponse,
  sourceToId,
  timeBucketId,
} from '../network/protocol';
import { compileQuery } from '../network/query-matcher';
import { Devnet, startDevnet } from './devnet';

const now = new Date('2024-06-01T00:00:00Z');
const VALIDATOR_HOTKEY = '5GrwvaEF5zXb26Fz9rcQpDWS57CtERHpNehXCPcNoHGKutQY';

function post(url: string, body: unknown, headers: Record<string, string> = {}): Promise<Response> {
  return fetch(url, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      'x-validator-hotkey': VALIDATOR_HOTKEY,
      ...headers,
    },
    body: typeof body === 'string' ? body : JSON.stringify(body),
    signal: AbortSignal.timeout(5000),
  });
}

function query(overrides: Partial<OnDemandMinerRequest>): OnDemandMinerRequest {
  return {
    source: 'X',
    usernames: [],
    keywords: [],
    start_date: null,
    end_date: null,
    limit: 100,
    ...overrides,
  };
}

/** The honest answer, by brute force over what the miner holds. */
function expectedAnswer(items: readonly DataItem[], request: OnDemandMinerRequest): string[] {
  const matcher = compileQuery(request);
  return items
    .filter((item) => matcher.matches(item))
    .sort(
      (left, right) =>
        right.datetime.localeCompare(left.datetime) || left.uri.localeCompare(right.uri),
    )
    .slice(0, request.limit)
    .map((item) => item.uri);
}

describe('startDevnet', () => {
  let devnet: Devnet;
  let directory: string;

  beforeAll(async () => {
    directory = await mkdtemp(join(tmpdir(), 'devnet-'));
    devnet = await startDevnet({
      miners: 3,
      seed: 11,
      now,
      metagraphFile: join(directory, 'nested', 'metagraph.json'),
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

  it('lists miners with their urls and validators without axons', () => {
    const { neurons } = devnet.metagraph;
    expect(neurons.map((neuron) => neuron.uid)).toEqual([0, 1, 2, 3, 4]);
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
    expect(validators).toHaveLength(2);
    const largestMinerStake = Math.max(...neurons.slice(0, 3).map((neuron) => neuron.stake));
    for (const validator of validators) {
      expect(validator.axon_url).toBeNull();
      expect(validator.stake).toBeGreaterThan(largestMinerStake);
    }
  });

  it('gives ss58-looking keys, with miners 0 and 1 sharing a coldkey', () => {
    const { neurons } = devnet.metagraph;
    for (const neuron of neurons) {
      expect(neuron.hotkey).toMatch(/^5[1-9A-HJ-NP-Za-km-z]{47}$/);
      expect(neuron.coldkey).toMatch(/^5[1-9A-HJ-NP-Za-km-z]{47}$/);
    }
    expect(new Set(neurons.map((neuron) => neuron.hotkey)).size).toBe(neurons.length);
    expect(neurons[0].coldkey).toBe(neurons[1].coldkey);
    expect(neurons[2].coldkey).not.toBe(neurons[0].coldkey);
  });

  it('refuses calls without a validator hotkey', async () => {
    const response = await post(
      `${devnet.miners[0].url}/GetMinerIndex`,
      {},
      { 'x-validator-hotkey': '' },
    );
    expect(response.status).toBe(401);
    expect(await response.json()).toEqual({ error: 'missing validator hotkey' });
  });

  it('answers 404 JSON to unknown paths and 400 to bad bodies', async () => {
    const url = devnet.miners[0].url;
    const unknown = await post(`${url}/Nope`, {});
    expect(unknown.status).toBe(404);
    expect(await unknown.json()).toHaveProperty('error');
    expect((await post(`${url}/OnDemandRequest`, '{not json')).status).toBe(400);
    expect((await post(`${url}/OnDemandRequest`, query({ limit: 0 }))).status).toBe(400);
    expect(
      (await post(`${url}/OnDemandRequest`, { ...query({}), start_date: 'soon' })).status,
    ).toBe(400);
    expect((await post(`${url}/GetDataEntityBucket`, { bucket_id: { source: 3 } })).status).toBe(
      400,
    );
  });

  it('answers on-demand queries with the matching items it holds, newest first', async () => {
    const holdings = devnet.corpus.holdingsOf(1);
    const popular = holdings.find((item) => item.source === 'X');
    const author = popular?.source === 'X' ? popular.user.username : '';
    const requests = [
      query({ keywords: ['#bitcoin'] }),
      query({ usernames: [`@${author.toUpperCase()}`], limit: 1000 }),
      query({ source: 'REDDIT', keywords: ['/cryptocurrency'], limit: 7 }),
      query({ source: 'REDDIT', start_date: '2024-05-20T00:00:00', end_date: '2024-05-21' }),
      query({ keywords: ['nobody-says-this'] }),
    ];
    const sizes: number[] = [];
    for (const request of requests) {
      const response = await post(`${devnet.miners[1].url}/OnDemandRequest`, request);
      expect(response.status).toBe(200);
      const body = (await response.json()) as OnDemandMinerResponse;
      const expected = expectedAnswer(holdings, request);
      expect(body.data.map((item) => item.uri)).toEqual(expected);
      sizes.push(expected.length);
    }
    // The limit bites on the first and third query; only the last one finds nothing.
    expect(sizes).toEqual([100, expect.any(Number), 7, expect.any(Number), 0]);
    expect(Math.min(sizes[1], sizes[3])).toBeGreaterThan(0);
  });

  it('reports an index that sums its entities per source, label and hour', async () => {
    const response = await post(`${devnet.miners[2].url}/GetMinerIndex`, {});
    const index = (await response.json()) as CompressedMinerIndex;
    const expected = new Map<string, number>();
    for (const item of devnet.corpus.holdingsOf(2)) {
      const key = `${sourceToId(item.source)}|${item.label}|${timeBucketId(new Date(item.datetime))}`;
      expected.set(key, (expected.get(key) ?? 0) + Buffer.byteLength(JSON.stringify(item)));
    }
    const reported = new Map<string, number>();
    for (const [sourceId, labels] of Object.entries(index.sources)) {
      for (const entry of labels ?? []) {
        expect(entry.sizes_bytes).toHaveLength(entry.time_bucket_ids.length);
        entry.time_bucket_ids.forEach((bucket, position) => {
          reported.set(`${sourceId}|${entry.label}|${bucket}`, entry.sizes_bytes[position]);
        });
      }
    }
    expect(reported).toEqual(expected);
    expect(index.sources['2']?.some((entry) => entry.label === null)).toBe(true);
  });

  it('returns the entities of a bucket with honest sizes', async () => {
    const url = devnet.miners[2].url;
    const index = (await (await post(`${url}/GetMinerIndex`, {})).json()) as CompressedMinerIndex;
    const entry = index.sources['2']?.find((candidate) => candidate.label === '#bitcoin');
    if (!entry) throw new Error('miner 2 holds no #bitcoin posts');
    const bucketId = { time_bucket_id: entry.time_bucket_ids[0], source: 2, label: '#BITCOIN' };
    const response = await post(`${url}/GetDataEntityBucket`, { bucket_id: bucketId });
    const { data_entities: entities } = (await response.json()) as GetDataEntityBucketResponse;
    expect(entities.length).toBeGreaterThan(0);
    for (const entity of entities) {
      expect(entity.content_size_bytes).toBe(Buffer.byteLength(JSON.stringify(entity.content)));
      expect(entity).toMatchObject({ source: 'X', label: '#bitcoin', uri: entity.content.uri });
      expect(timeBucketId(new Date(entity.datetime))).toBe(bucketId.time_bucket_id);
    }
    const total = entities.reduce((sum, entity) => sum + entity.content_size_bytes, 0);
    expect(total).toBe(entry.sizes_bytes[0]);

    const empty = await post(`${url}/GetDataEntityBucket`, {
      bucket_id: { ...bucketId, time_bucket_id: 1 },
    });
    expect(await empty.json()).toEqual({ data_entities: [] });
  });

  it('counts the calls each miner receives', async () => {
    const before = devnet.requestCounts(0);
    await post(`${devnet.miners[0].url}/GetMinerIndex`, {});
    await post(`${devnet.miners[0].url}/GetMinerIndex`, {}, { 'x-validator-hotkey': '' });
    expect(devnet.requestCounts(0)).toEqual({ ...before, GetMinerIndex: before.GetMinerIndex + 2 });
    expect(() => devnet.requestCounts(9)).toThrow();
  });

  it('exposes which miners hold an item', () => {
    const item = devnet.corpus.holdingsOf(0)[0];
    expect(devnet.corpus.holdersOf(item.uri)).toContain(0);
    expect(devnet.corpus.holdersOf('https://x.com/nobody/status/1')).toEqual([]);
  });

  it('refuses to bind anything but loopback', async () => {
    await expect(startDevnet({ miners: 1, host: '0.0.0.0' })).rejects.toThrow(/loopback/);
  });
});
