import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { DataSource } from 'typeorm';
import { callAxon, sendSigned } from '../../src/devnet/axon-client';
import { writeMetagraphFile } from '../../src/devnet/metagraph';
import { cryptoReady, Sr25519Keypair } from '../../src/network/bittensor/keypair';
import { IndexSyncService } from '../../src/network/index-sync/index-sync.service';
import { NetworkService } from '../../src/network/network.service';
import { startTestNetwork, TestNetwork } from '../support/network';
import { startTestApp, TEST_MASTER_KEY, TestApp, testValidatorHotkey } from '../support/test-app';

const ENDPOINT = '/api/v1/on_demand_data_request';

async function credibility(app: TestApp): Promise<Map<number, number>> {
  await app.app.get(NetworkService).settled();
  const rows = await app.app
    .get(DataSource)
    .query<{ uid: number; credibility: number }[]>('SELECT uid, credibility FROM miners');
  return new Map(rows.map((row) => [row.uid, row.credibility]));
}

const query = (app: TestApp, body: object = { source: 'x', keywords: ['#bitcoin'] }) =>
  app.http.post(ENDPOINT).set('X-API-Key', TEST_MASTER_KEY).send(body).expect(200);

describe('Signed calls to the devnet axons', () => {
  let network: TestNetwork;
  let app: TestApp;

  beforeAll(async () => {
    await cryptoReady();
    network = await startTestNetwork(3);
    app = await startTestApp(
      {
        ...network.env,
        QUERY_MINERS: '3',
        QUERY_QUORUM: '3',
        QUERY_CACHE_TTL_SECONDS: '0',
        // Beside a validator, a spot check would take a holder's only bucket call of the hour
        // and leave query_bucket none: this gateway has the hotkey to itself.
        VALIDATOR_SHARES_HOTKEY: 'false',
      },
      { ownDatabase: true },
    );
  });
  afterAll(async () => {
    await app.close();
    await network.stop();
  });

  it('are accepted by every axon: on-demand, index sync, spot checks and query_bucket', async () => {
    const answer = await query(app);
    expect(answer.body.status).toBe('success');
    expect(answer.body.meta.miners_responded).toBe(3);
    const report = await app.app.get(IndexSyncService).runIfDue();
    expect(report).toMatchObject({ synced: 3, failed: 0, skipped: 0 });
    expect(report!.spotChecks.length).toBeGreaterThan(0);
    const bucket = await app.http
      .get('/api/v1/query_bucket/x?label=%23bitcoin')
      .set('X-API-Key', TEST_MASTER_KEY)
      .expect(200);
    expect(bucket.body).toMatchObject({ status: 'success', data: expect.any(Array) });

    const gateway = testValidatorHotkey();
    const calls = network.devnet.miners.flatMap((miner) => network.devnet.calls(miner.uid));
    expect(calls.length).toBeGreaterThanOrEqual(3 + 3 + report!.spotChecks.length);
    for (const call of calls) expect(call).toMatchObject({ caller: gateway, status: 200 });
    const synapses = new Set(calls.map((call) => call.synapse));
    expect(synapses).toEqual(new Set(['OnDemandRequest', 'GetMinerIndex', 'GetDataEntityBucket']));
  });

  it('cannot be tampered with or replayed, and unknown callers are refused', async () => {
    const miner = network.devnet.miners[0];
    const gatewayKey = Sr25519Keypair.fromUri('//Gateway');
    const call = {
      url: miner.url,
      hotkey: miner.hotkey,
      synapse: 'OnDemandRequest',
      fields: { source: 2, limit: 1 },
    };
    const signed = await callAxon({ ...call, signer: gatewayKey });
    expect(signed.status).toBe(200);

    const replayed = await sendSigned(signed.request);
    expect(replayed).toMatchObject({ status: 401 });
    expect(replayed.text).toContain('Nonce is too old');

    const tampered = await callAxon({
      ...call,
      signer: gatewayKey,
      tamper: (request) => ({
        ...request,
        headers: {
          ...request.headers,
          bt_header_dendrite_signature: `0x${'00'.repeat(64)}`,
        },
      }),
    });
    expect(tampered.status).toBe(401);
    expect(tampered.text).toContain('Signature mismatch');

    const stranger = await callAxon({ ...call, signer: Sr25519Keypair.fromUri('//Stranger') });
    expect(stranger.status).toBe(403);
    expect(stranger.text).toContain('Unrecognized hotkey');
  });
});

describe('Miners that refuse the gateway', () => {
  let network: TestNetwork;
  let logs: string[];
  const start = (env: Record<string, string> = {}) => {
    logs = [];
    const destination = new Writable({
      write: (chunk: Buffer, _, done) => {
        logs.push(chunk.toString());
        done();
      },
    });
    return startTestApp(
      {
        ...network.env,
        QUERY_MINERS: '4',
        QUERY_QUORUM: '4',
        QUERY_CACHE_TTL_SECONDS: '0',
        LOG_LEVEL: 'info',
        ...env,
      },
      { ownDatabase: true, logDestination: destination },
    );
  };

  beforeAll(async () => {
    // Miners 0 and 1 no longer serve on-demand (as public subnet 13 miners); 2 blacklists us.
    network = await startTestNetwork([
      { behaviour: { noOnDemand: true } },
      { behaviour: { noOnDemand: true } },
      { behaviour: { blacklistAll: true } },
      {},
    ]);
  });
  afterAll(() => network.stop());

  it('are not asked again after a 404, lose no credibility for 404 or 403, and say why', async () => {
    const app = await start();
    try {
      const before = await credibility(app);
      const first = await query(app);
      expect(first.body.meta.miners_failed.reasons).toEqual({ not_served: 2, blacklisted: 1 });
      expect(first.body.meta.miners_responded).toBe(1);
      const after = await credibility(app);
      for (const uid of [0, 1, 2]) expect(after.get(uid)).toBe(before.get(uid));

      const asked = (uid: number) => network.devnet.requestCounts(uid).OnDemandRequest;
      const counts = [0, 1, 2].map(asked);
      const second = await query(app);
      expect(second.body.meta.miners_queried).toBe(1);
      expect([0, 1, 2].map(asked)).toEqual(counts);

      // The 403 spent miner 2's OnDemandRequest budget (a default since miners limit the synapse).
      const text = logs.join('');
      expect(text).toContain('does not serve OnDemandRequest (404)');
      expect(text).toContain('refused our OnDemandRequest call (403)');
      expect(text.match(/refused our OnDemandRequest call \(403\)/g)).toHaveLength(1);
      expect(text).toContain('Its OnDemandRequest budget counts as spent until');

      const metrics = await app.http.get('/metrics').set('X-API-Key', TEST_MASTER_KEY).expect(200);
      expect(metrics.text).toMatch(
        /gateway_miner_call_failures_total\{miner="0",endpoint="OnDemandRequest",reason="not_served"\} 1/,
      );
      expect(metrics.text).toMatch(/reason="blacklisted"\} 1/);
    } finally {
      await app.close();
    }
  });

  it('names a 401 unauthorized and hints at the clock when nonces are refused', async () => {
    // The miners' clocks run an hour ahead: our nonces look an hour old to them.
    network.devnet.advanceClock(60 * 60_000);
    // Live: in auto, a round where no miner answered and miners 0 and 1 answered 404 goes to
    // stored data, whatever the 401s.
    const app = await start({ ON_DEMAND_MODE: 'live' });
    try {
      const before = await credibility(app);
      const answer = await query(app);
      expect(answer.body.status).toBe('error');
      expect(answer.body.meta.miners_failed.reasons).toMatchObject({ unauthorized: 1 });
      expect(logs.join('')).toMatch(/could not verify our OnDemandRequest call \(401\).*clock/);
      expect((await credibility(app)).get(3)).toBe(before.get(3));
    } finally {
      await app.close();
      network.devnet.advanceClock(-60 * 60_000);
    }
  });

  it('answers "no miners" with the reason when none serves on-demand any more (live mode)', async () => {
    // In the default mode (auto) such a query is answered from stored data instead.
    const app = await start({ QUERY_MINERS: '2', QUERY_QUORUM: '2', ON_DEMAND_MODE: 'live' });
    try {
      network.devnet.setBehaviour(2, { noOnDemand: true });
      network.devnet.setBehaviour(3, { noOnDemand: true });
      await query(app);
      await query(app);
      const answer = await query(app);
      expect(answer.body).toMatchObject({
        status: 'error',
        meta: {
          error:
            'No available miner serves on-demand queries: all 4 answered 404 to OnDemandRequest ' +
            '(public subnet 13 miners stopped serving it in December 2025)',
        },
      });
    } finally {
      await app.close();
      network.devnet.setBehaviour(2, { blacklistAll: true });
      network.devnet.setBehaviour(3, {});
    }
  });
});

describe('Axon addresses outside MINER_ALLOWED_NETWORKS', () => {
  let listener: Server;
  let connections = 0;
  let directory: string;
  let app: TestApp;

  beforeAll(async () => {
    await cryptoReady();
    listener = createServer((socket) => {
      connections++;
      socket.destroy();
    });
    await new Promise<void>((resolve) => listener.listen(0, '127.0.0.1', resolve));
    const { port } = listener.address() as { port: number };
    directory = mkdtempSync(join(tmpdir(), 'gateway-refused-'));
    const neuron = (uid: number, host: string) => ({
      uid,
      hotkey: Sr25519Keypair.fromUri(`//Refused${uid}`).address,
      coldkey: Sr25519Keypair.fromUri(`//RefusedCold${uid}`).address,
      axon_url: `http://${host}:${port}`,
      stake: 10,
      incentive: 0.5,
      validator_permit: false,
    });
    const file = join(directory, 'metagraph.json');
    await writeMetagraphFile(file, {
      netuid: 13,
      block: 1,
      updated_at: new Date().toISOString(),
      // A loopback address, and a host name that resolves to one: as anyone could register.
      neurons: [neuron(0, '127.0.0.1'), neuron(1, 'localhost')],
    });
    // Public addresses only, as in production: the listener must never be dialled.
    app = await startTestApp(
      { METAGRAPH_FILE: file, MINER_ALLOWED_NETWORKS: 'public' },
      { ownDatabase: true },
    );
  });
  afterAll(async () => {
    await app.close();
    await new Promise((resolve) => listener.close(resolve));
    rmSync(directory, { recursive: true, force: true });
  });

  it('are listed as address_refused and never contacted', async () => {
    const rows = await app.app
      .get(DataSource)
      .query<{ uid: number; state: string }[]>('SELECT uid, state FROM miners ORDER BY uid');
    expect(rows).toEqual([
      { uid: 0, state: 'address_refused' },
      { uid: 1, state: 'address_refused' },
    ]);
    const status = await app.http
      .get('/api/v1/monitoring/system-status')
      .set('X-API-Key', TEST_MASTER_KEY)
      .expect(200);
    expect(status.body.components.miners).toMatchObject({
      available: 0,
      total: 2,
      address_refused: 2,
    });

    const answer = await query(app);
    expect(answer.body).toMatchObject({ status: 'error', meta: { error: 'No miners available' } });
    expect(await app.app.get(IndexSyncService).runIfDue()).toMatchObject({ miners: 0 });
    const bucket = await app.http
      .get('/api/v1/query_bucket/x')
      .set('X-API-Key', TEST_MASTER_KEY)
      .expect(200);
    expect(bucket.body.status).toBe('error');
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(connections).toBe(0);
  });
});
