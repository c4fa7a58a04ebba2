import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { AddressInfo, connect, createServer, Socket } from 'node:net';
import { join } from 'node:path';
import { Pool } from 'pg';
import { DataSource } from 'typeorm';
import { PROBE_QUERY_TIMEOUT_MS } from '../../src/database/data-source-options';
import { writeMetagraphFile } from '../../src/devnet/metagraph';
import { createDatabase, dropDatabase, onServer, scratchDatabaseName } from '../support/database';
import { createKey } from '../support/fixtures';
import { whileThePoolIsHeld } from '../support/held-pool';
import { metagraphNeuron } from '../support/neurons';
import { startTestApp, TEST_MASTER_KEY, TestApp } from '../support/test-app';

describe('Health', () => {
  let app: TestApp;

  beforeAll(async () => {
    // Its own database: no metagraph was ever read into it (network null).
    app = await startTestApp(
      { NETUID: '13', VALIDATOR_HOTKEY_URI: '//Health' },
      { ownDatabase: true },
    );
  });
  afterAll(() => app.close());

  it('answers the HealthResponse of the interface', async () => {
    const { key } = await createKey(app);
    const response = await app.http.get('/api/v1/health').set('X-API-Key', key).expect(200);
    expect(response.body).toEqual({
      status: 'healthy',
      timestamp: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
      miners_available: 0,
      version: '1.0.0',
      netuid: 13,
      hotkey: app.config.validatorKeypair.address,
      network: null,
    });
  });

  it('reports components, latency and uptime to the master key', async () => {
    const response = await app.http
      .get('/api/v1/monitoring/system-status')
      .set('X-API-Key', TEST_MASTER_KEY)
      .expect(200);
    expect(response.body).toMatchObject({
      timestamp: expect.any(String),
      uptime_seconds: expect.any(Number),
      version: '1.0.0',
      network: null,
      components: {
        database: { status: 'healthy', latency_ms: expect.any(Number) },
        redis: { status: 'disabled' },
        miners: { available: 0, total: 0, serving: 0, validators: 0 },
        chain: { status: 'disabled', block: null, last_read_at: null, age_seconds: null },
        // No GRAVITY_REPO_URL, no SUBTENSOR_URL: votes stay local.
        publication: { status: 'disabled', state: 'disabled' },
      },
    });
  });

  it('documents as required every field a component always carries, its null latency and chain fields included', async () => {
    const { body } = await app.http
      .get('/api/v1/monitoring/system-status')
      .set('X-API-Key', TEST_MASTER_KEY)
      .expect(200);
    const document = (await app.http.get('/openapi.json').expect(200)).body as {
      components: { schemas: Record<string, { required?: string[] }> };
    };
    const schemas: Record<string, string> = {
      database: 'ComponentStatus',
      redis: 'ComponentStatus',
      miners: 'MinersStatus',
      miner_index: 'MinerIndexStatus',
      chain: 'ChainStatus',
      publication: 'PublicationComponentStatus',
    };
    // What a component sends only in some states (a problem, a vote's commit): optional.
    const conditional = ['error', 'commit_sha', 'block_number', 'next_attempt_at'];
    for (const [name, component] of Object.entries(body.components as Record<string, object>)) {
      const sent = Object.keys(component).filter((field) => !conditional.includes(field));
      expect(sent).toContain('latency_ms');
      // Optional in the schemas, generated clients typed them `latency_ms?: number | null`
      // (and the chain's block, last_read_at, age_seconds), though every answer sends them.
      expect({
        name,
        missing: sent.filter((field) => !required(schemas[name]).includes(field)),
      }).toEqual({ name, missing: [] });
    }
    function required(schema: string): string[] {
      return document.components.schemas[schema].required ?? [];
    }
  });

  it("stays healthy while every pooled connection is held: a busy replica's database is up", async () => {
    const pool = (app.app.get(DataSource).driver as unknown as { master: Pool }).master;
    await whileThePoolIsHeld(app, async () => {
      const health = await app.http.get('/api/v1/health').set('X-API-Key', TEST_MASTER_KEY);
      const status = await app.http
        .get('/api/v1/monitoring/system-status')
        .set('X-API-Key', TEST_MASTER_KEY);
      // The pool was held all along.
      expect(pool.idleCount).toBe(0);
      expect(health.status).toBe(200);
      expect(health.body.status).toBe('healthy');
      expect(status.body.components.database.status).toBe('healthy');
    });
  });
});

describe('Health with miners while the pool is saturated', () => {
  let app: TestApp;
  let directory: string;

  beforeAll(async () => {
    directory = mkdtempSync(join(tmpdir(), 'health-miners-'));
    const file = join(directory, 'metagraph.json');
    await writeMetagraphFile(file, {
      netuid: 13,
      block: 7,
      updated_at: new Date().toISOString(),
      neurons: [
        metagraphNeuron(0),
        metagraphNeuron(1),
        metagraphNeuron(2),
        metagraphNeuron(3, { validator_permit: true, stake: 50_000 }),
      ],
    });
    app = await startTestApp({ METAGRAPH_FILE: file }, { ownDatabase: true });
  });
  afterAll(async () => {
    await app.close();
    rmSync(directory, { recursive: true, force: true });
  });

  // Counted through the main pool, the count waited for a connection past the checks' second:
  // health said 0 miners available and system-status degraded (an audit's finding).
  it('still tells the miners available, from the metagraph in memory', async () => {
    await whileThePoolIsHeld(app, async () => {
      const health = await app.http.get('/api/v1/health').set('X-API-Key', TEST_MASTER_KEY);
      const status = await app.http
        .get('/api/v1/monitoring/system-status')
        .set('X-API-Key', TEST_MASTER_KEY);
      expect(health.body).toMatchObject({ status: 'healthy', miners_available: 3 });
      // (Degraded for the hotkey alone, which is no neuron of this metagraph.)
      expect(status.body.components.miners).toMatchObject({
        hotkey_standing: 'not_registered',
        available: 3,
        total: 4,
        serving: 4,
        validators: 1,
      });
    });
  });
});

describe('Health with a METAGRAPH_FILE that cannot be read', () => {
  let app: TestApp;
  let directory: string;

  beforeAll(async () => {
    directory = mkdtempSync(join(tmpdir(), 'health-metagraph-'));
    const file = join(directory, 'metagraph.json');
    writeFileSync(file, '{"neurons": [');
    app = await startTestApp({ METAGRAPH_FILE: file }, { ownDatabase: true });
  });
  afterAll(async () => {
    await app.close();
    rmSync(directory, { recursive: true, force: true });
  });

  it('says so in system-status: miners degraded, with the cause', async () => {
    const response = await app.http
      .get('/api/v1/monitoring/system-status')
      .set('X-API-Key', TEST_MASTER_KEY)
      .expect(200);
    expect(response.body.status).toBe('degraded');
    expect(response.body.components.miners).toMatchObject({
      status: 'degraded',
      error: expect.stringMatching(/^METAGRAPH_FILE could not be read: /),
    });
  });
});

describe('Health when the database goes away', () => {
  const serverUrl = () => process.env.TEST_RUN_SERVER_URL!;
  const name = scratchDatabaseName('health');
  let app: TestApp;

  beforeAll(async () => {
    const url = await createDatabase(serverUrl(), name);
    app = await startTestApp({ DATABASE_URL: url });
  });
  afterAll(async () => {
    await app.close();
    await dropDatabase(serverUrl(), name);
  });

  // A client reading the document must not wait for a 503 that never comes.
  it('documents that system-status answers an unhealthy database with HTTP 200', async () => {
    const document = (await app.http.get('/openapi.json').expect(200)).body;
    const operation = document.paths['/api/v1/monitoring/system-status'].get;
    expect(operation.description).toContain(
      'HTTP 200 whatever the components\' states, `status: "unhealthy"` included',
    );
  });

  it('answers 503 with status unhealthy, without hanging', async () => {
    await app.http.get('/api/v1/health').set('X-API-Key', TEST_MASTER_KEY).expect(200);
    await onServer(serverUrl(), async (client) => {
      await client.query(
        `ALTER DATABASE ${client.escapeIdentifier(name)} WITH ALLOW_CONNECTIONS false`,
      );
      await client.query(
        'SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1',
        [name],
      );
    });
    await new Promise((resolve) => setTimeout(resolve, 1100)); // past the 1 s check cache
    const started = Date.now();
    const response = await app.http
      .get('/api/v1/health')
      .set('X-API-Key', TEST_MASTER_KEY)
      .expect(503);
    expect(response.body.status).toBe('unhealthy');
    // Which check failed, by its code (Postgres refuses the connection: 55000 or 57P01).
    expect(response.body.reason).toMatch(
      /^database: the check failed \([0-9A-Z]{5}\); system-status has the detail$/,
    );
    expect(Date.now() - started).toBeLessThan(3000);
    // A report, answered while the reporter works: the outage is in its body, with the error.
    const status = await app.http
      .get('/api/v1/monitoring/system-status')
      .set('X-API-Key', TEST_MASTER_KEY)
      .expect(200);
    expect(status.body).toMatchObject({
      status: 'unhealthy',
      components: { database: { status: 'unhealthy', error: expect.any(String) } },
    });

    await onServer(serverUrl(), (client) =>
      client.query(`ALTER DATABASE ${client.escapeIdentifier(name)} WITH ALLOW_CONNECTIONS true`),
    );
    await new Promise((resolve) => setTimeout(resolve, 1100));
    await app.http.get('/api/v1/health').set('X-API-Key', TEST_MASTER_KEY).expect(200);
  });
});

/**
 * A loopback relay to Postgres whose `silence()` stops forwarding on every connection open then,
 * sending no reset, while new connections work: a failover whose old host went quiet.
 */
async function silencingRelay(
  target: URL,
): Promise<{ port: number; silence(): void; close(): void }> {
  const pairs: { client: Socket; upstream: Socket; silent: boolean }[] = [];
  const server = createServer((client) => {
    const upstream = connect(Number(target.port || 5432), target.hostname);
    const pair = { client, upstream, silent: false };
    pairs.push(pair);
    client.on('data', (data) => {
      if (!pair.silent) upstream.write(data);
    });
    upstream.on('data', (data) => {
      if (!pair.silent) client.write(data);
    });
    for (const socket of [client, upstream]) {
      socket.on('error', () => undefined);
      socket.on('close', () => {
        if (pair.silent) return;
        client.destroy();
        upstream.destroy();
      });
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as AddressInfo).port,
    silence: () => pairs.forEach((pair) => (pair.silent = true)),
    close: () => {
      for (const pair of pairs) {
        pair.client.destroy();
        pair.upstream.destroy();
      }
      server.close();
    },
  };
}

describe('Health when its connection goes silent', () => {
  const serverUrl = () => process.env.TEST_RUN_SERVER_URL!;
  const name = scratchDatabaseName('health-silent');
  let relay: Awaited<ReturnType<typeof silencingRelay>>;
  let app: TestApp;

  beforeAll(async () => {
    const url = new URL(await createDatabase(serverUrl(), name));
    relay = await silencingRelay(new URL(url));
    url.hostname = '127.0.0.1';
    url.port = String(relay.port);
    app = await startTestApp({ DATABASE_URL: url.toString() });
  });
  afterAll(async () => {
    relay.close();
    await app.close();
    await dropDatabase(serverUrl(), name);
  });

  it('opens a new connection once a check goes unanswered, and is healthy again', async () => {
    const health = () => app.http.get('/api/v1/health').set('X-API-Key', TEST_MASTER_KEY);
    expect((await health()).status).toBe(200);
    relay.silence();
    await new Promise((resolve) => setTimeout(resolve, 1100)); // past the 1 s check cache
    // The first unanswered check starts now (timed from here, not from the silence, so that a
    // stall before it does not count against the recovery).
    const unansweredAt = Date.now();
    expect((await health()).status).toBe(503);
    // The unanswered check times out (3 s) and the next one asks over a new connection.
    let recoveredAt: number | undefined;
    while (recoveredAt === undefined && Date.now() - unansweredAt < 15_000) {
      if ((await health()).status === 200) recoveredAt = Date.now();
      else await new Promise((resolve) => setTimeout(resolve, 250));
    }
    expect(recoveredAt).toBeDefined();
    expect(recoveredAt! - unansweredAt).toBeLessThan(PROBE_QUERY_TIMEOUT_MS + 3000);
  }, 30_000);
});
