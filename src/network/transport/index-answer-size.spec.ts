import { createServer, Server } from 'node:http';
import { AddressInfo } from 'node:net';
import { Clock } from '../../common/clock/clock';
import { MetricsService } from '../../common/metrics/metrics.service';
import { DEFAULT_MINER_MAX_INDEX_RESPONSE_BYTES } from '../../config/miner-answer-sizes';
import { loadConfig } from '../../config/load-config';
import { cryptoReady, Sr25519Keypair } from '../bittensor/keypair';
import { ValidatorIdentity } from '../bittensor/validator-identity';
import { parseCompressedIndex } from '../index/compressed-index';
import { MAX_INDEX_BUCKETS, MAX_LABEL_LENGTH, timeBucketId } from '../protocol';
import { getMinerIndexFields, readCompressedIndex } from '../sn13/messages';
import { holdsMoreValues, MAX_INDEX_ANSWER_VALUES, MAX_INDEX_VALUES } from '../sn13/miner-json';
import { CallBudgets } from './call-budgets';
import { MinerClient } from './miner-client';
import { MinerTarget } from './miner-reply';
import { MinerCallError } from './miner-failures';

const MINER = Sr25519Keypair.fromUri('//Miner').address;
const NOW = new Date();
const HOUR = timeBucketId(NOW);

/**
 * An honest index at the bucket cap, every bucket under a label of its own (the largest shape
 * for a given count): X hashtags and subreddits, spread over the last 30 days. About 27 MB.
 */
function fullIndex(): string {
  const entry = (label: string, i: number) => ({
    label,
    time_bucket_ids: [HOUR - (i % 700)],
    sizes_bytes: [1_000 + (i % 50_000)],
  });
  const half = MAX_INDEX_BUCKETS / 2;
  const x = Array.from({ length: half }, (_, i) => entry(`#topic_${i}`, i));
  const reddit = Array.from({ length: half }, (_, i) => entry(`r/community_${i}`, i));
  // Compact, as the miner's pydantic model_dump_json writes it.
  return JSON.stringify({ sources: { '1': reddit, '2': x } });
}

/** A miner on loopback answering every call with this index (no axon checks: not the subject). */
async function startMiner(serialized: string): Promise<{ server: Server; target: MinerTarget }> {
  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const synapse = JSON.parse(Buffer.concat(chunks).toString('utf8')) as object;
      const body = JSON.stringify({ ...synapse, compressed_index_serialized: serialized });
      response.writeHead(200, { 'content-type': 'application/json' });
      response.end(body);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return { server, target: { uid: 1, hotkey: MINER, axonUrl: `http://127.0.0.1:${port}` } };
}

describe('the size cap of a GetMinerIndex answer', () => {
  const clients: MinerClient[] = [];
  const servers: Server[] = [];
  let identity: ValidatorIdentity;

  function createClient(env: Record<string, string> = {}): MinerClient {
    const budgets = {
      take: () => Promise.resolve({ granted: true, kept: false, freeAt: null }),
      spend: () => Promise.resolve(undefined),
    };
    const client = new MinerClient(
      loadConfig(env),
      new MetricsService(),
      identity,
      budgets as unknown as CallBudgets,
      new Clock(),
    );
    clients.push(client);
    return client;
  }

  async function miner(serialized: string): Promise<MinerTarget> {
    const { server, target } = await startMiner(serialized);
    servers.push(server);
    return target;
  }

  beforeAll(async () => {
    await cryptoReady();
    identity = new ValidatorIdentity(Sr25519Keypair.fromUri('//Gateway'));
  });

  afterEach(async () => {
    for (const client of clients.splice(0)) client.onModuleDestroy();
    await Promise.all(
      servers.splice(0).map((server) => new Promise((resolve) => server.close(resolve))),
    );
  });

  it('reads an honest index of 350,000 buckets, larger than the 16 MiB of other answers', async () => {
    const serialized = fullIndex();
    expect(serialized.length).toBeGreaterThan(16 * 1024 * 1024);
    const target = await miner(serialized);
    // The defaults: 16 MiB for every other synapse.
    const client = createClient();

    const reply = await client.call(target, 'GetMinerIndex', getMinerIndexFields(), 20_000);

    const rows = parseCompressedIndex(readCompressedIndex(reply.body), NOW);
    expect(rows).toHaveLength(MAX_INDEX_BUCKETS);
    // Within the bound of values, at its 6 a bucket (and the `sources` around them).
    expect(holdsMoreValues(serialized, MAX_INDEX_VALUES)).toBe(false);
    expect(holdsMoreValues(serialized, 6 * MAX_INDEX_BUCKETS + 3)).toBe(false);
    expect(holdsMoreValues(serialized, 6 * MAX_INDEX_BUCKETS + 2)).toBe(true);
  });

  it('refuses a GetMinerIndex answer over MINER_MAX_INDEX_RESPONSE_BYTES as oversize', async () => {
    const target = await miner(
      JSON.stringify({ sources: { '2': [] }, padding: 'x'.repeat(40_000) }),
    );
    const client = createClient({
      MINER_MAX_RESPONSE_BYTES: String(64 * 1024),
      MINER_MAX_INDEX_RESPONSE_BYTES: String(32 * 1024),
    });

    const call = client.call(target, 'GetMinerIndex', getMinerIndexFields(), 5_000);

    await expect(call).rejects.toEqual(
      expect.objectContaining<Partial<MinerCallError>>({ reason: 'oversize' }),
    );
  });

  it('refuses as malformed an answer padded with containers within its byte cap, unparsed', async () => {
    // 95 MiB of this held about 2 GB of heap once parsed; the bound needs only a little of it.
    const server = createServer((_request, response) => {
      const pad = '{},'.repeat(MAX_INDEX_ANSWER_VALUES);
      response.writeHead(200, { 'content-type': 'application/json' });
      response.end(`{"compressed_index_serialized":"{}","pad":[${pad}{}]}`);
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    servers.push(server);
    const { port } = server.address() as AddressInfo;
    const target = { uid: 1, hotkey: MINER, axonUrl: `http://127.0.0.1:${port}` };

    const call = createClient().call(target, 'GetMinerIndex', getMinerIndexFields(), 5_000);

    await expect(call).rejects.toEqual(
      expect.objectContaining<Partial<MinerCallError>>({ reason: 'malformed' }),
    );
  });

  it('has a default that holds the largest honest index: every bucket under a 140-character label', () => {
    // Labels of one-byte characters; the highest hour id for a century and a 128 MB bucket.
    const entry = {
      label: `#${'a'.repeat(MAX_LABEL_LENGTH - 1)}`,
      time_bucket_ids: [999_999],
      sizes_bytes: [128 * 1024 * 1024],
    };
    // Nested in the answer as a JSON string (its quotes escaped), a comma between entries.
    const perBucket = JSON.stringify(JSON.stringify(entry)).length - 2 + 1;
    const envelope = 4 * 1024;

    expect(perBucket).toBe(214);
    expect(perBucket * MAX_INDEX_BUCKETS + envelope).toBeLessThan(
      DEFAULT_MINER_MAX_INDEX_RESPONSE_BYTES,
    );
  });
});
