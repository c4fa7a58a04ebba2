import { systemStatus } from '../support/system-status';
import { ChainReplay, startChainReplay } from '../support/chain-replay';
import { isLocal, recordConnections } from '../support/connections';
import { createKey } from '../support/fixtures';
import { scrape } from '../support/metrics';
import { sample } from '../support/prometheus-text';
import { startTestApp, TestApp } from '../support/test-app';
import { LogCapture } from '../support/log-capture';

type LogLine = { level: number; msg: string; context?: string };

/** Finney's genesis hash, as the replayed node answers it. */
const FINNEY_GENESIS = '0x2f0555cc76fc2840a25a6ea3b9637146806f1f44b090c175ffde2a7e5ab36c03';
const STANDINGS = ['validator', 'not_registered', 'no_permit', 'stake_too_low'];

/**
 * What an operator sees of the chain behind SUBTENSOR_URL (the recorded finney answers replayed
 * on 127.0.0.1; the gateway may call loopback only): which chain it is, whether it was read,
 * and the hotkey's standing, in the log, health, system-status and the metrics.
 */
describe('What operators see of the chain', () => {
  const health = async (app: TestApp) => {
    const { key } = await createKey(app);
    return (await app.http.get('/api/v1/health').set('X-API-Key', key).expect(200)).body as {
      status: string;
      network: string | null;
      miners_available: number;
    };
  };
  // One capture for both apps: nestjs-pino keeps the first app's logger for lines logged outside
  // a request, process-wide; each block empties it before its app starts.
  const capture = new LogCapture();
  let connections: ReturnType<typeof recordConnections>;
  let replay: ChainReplay;

  beforeAll(async () => {
    connections = recordConnections();
    replay = await startChainReplay();
  });
  afterAll(async () => {
    await replay.stop();
    expect(connections.destinations.filter((destination) => !isLocal(destination))).toEqual([]);
    connections.stop();
  });

  describe('a node that has not answered since the first start (nothing stored)', () => {
    let app: TestApp;

    beforeAll(async () => {
      capture.text = '';
      replay.mode = 'silent';
      app = await startTestApp(
        {
          SUBTENSOR_URL: replay.url,
          NETUID: '1',
          MINER_ALLOWED_NETWORKS: 'loopback',
          SUBTENSOR_TIMEOUT_MS: '500',
          LOG_LEVEL: 'info',
          INDEX_SYNC_ON_START: 'false',
        },
        { ownDatabase: true, logDestination: capture },
      );
    }, 30_000);
    afterAll(async () => {
      await app.close();
      replay.mode = 'answer';
    });

    it('says that no metagraph is stored, not that the stored one is kept', () => {
      const errors = capture
        .lines<LogLine>()
        .filter((line) => line.level === 50 && /metagraph from subtensor/.test(line.msg));
      expect(errors).toHaveLength(1);
      expect(errors[0].msg).toMatch(
        /not applied, and none is stored yet: no miners to call until a read succeeds: /,
      );
      expect(errors[0].msg).not.toMatch(/keeping/);
    });

    it('answers health with network null (no metagraph read), still healthy', async () => {
      expect(await health(app)).toMatchObject({
        status: 'healthy',
        network: null,
        miners_available: 0,
      });
    });

    it('shows in system-status that nothing was read, and no chain', async () => {
      const status = await systemStatus(app);
      expect(status.status).toBe('degraded');
      expect(status.network).toBeNull();
      expect(status.components.chain).toMatchObject({
        status: 'degraded',
        chain_name: null,
        genesis_hash: null,
        block: null,
        last_read_at: null,
      });
      expect(status.components.miners).toMatchObject({ hotkey_standing: null });
    });

    it('exports no connection, no standing and no read time in the metrics', async () => {
      const text = await scrape(app);
      expect(sample(text, 'gateway_chain_connected')).toBe(0);
      for (const standing of STANDINGS)
        expect(sample(text, 'gateway_hotkey_standing', { standing })).toBe(0);
      expect(sample(text, 'gateway_metagraph_last_read_timestamp_seconds')).toBe(0);
    });
  });

  describe('a node that answers', () => {
    let app: TestApp;
    let startedAt: number;

    beforeAll(async () => {
      capture.text = '';
      startedAt = Date.now() / 1000;
      const port = new URL(replay.url).port;
      app = await startTestApp(
        {
          // Credentials in the URL (a provider's token) are never shown.
          SUBTENSOR_URL: `ws://gateway:s3cret-token@127.0.0.1:${port}`,
          NETUID: '1',
          MINER_ALLOWED_NETWORKS: 'loopback',
          // The replay answers; reads of 1,024 neurons take seconds on a loaded machine.
          SUBTENSOR_TIMEOUT_MS: '60000',
          LOG_LEVEL: 'info',
          INDEX_SYNC_ON_START: 'false',
        },
        { ownDatabase: true, logDestination: capture },
      );
    }, 120_000);
    afterAll(() => app.close());

    it('logs the chain it reached: name, genesis, best block and the address without credentials', () => {
      const port = new URL(replay.url).port;
      const connected = capture
        .lines<LogLine>()
        .filter((line) => /^connected to subtensor/.test(line.msg));
      expect(connected).toEqual([
        expect.objectContaining({
          level: 30,
          msg:
            `connected to subtensor ws://127.0.0.1:${port}: chain Bittensor, ` +
            `genesis ${FINNEY_GENESIS}, best block 6852690`,
        }),
      ]);
      expect(capture.text).not.toContain('s3cret-token');
    });

    it('logs the hotkey standing once it is known, also as a line of its own', () => {
      const standing = capture
        .lines<LogLine>()
        .filter((line) => /this gateway's hotkey/.test(line.msg));
      expect(standing).toEqual([
        expect.objectContaining({ level: 40, msg: expect.stringMatching(/is not registered/) }),
      ]);
    });

    it("logs the node's refusal of a runtime call as our JSON warning", () => {
      const refused = capture
        .lines<LogLine>()
        .filter((line) => / refused SubnetInfoRuntimeApi_/.test(line.msg));
      expect(refused).toEqual([
        expect.objectContaining({
          level: 40,
          msg: expect.stringMatching(
            /refused SubnetInfoRuntimeApi_get_selective_mechagraph \(1002: Execution failed: .*\); the metagraph is read with the calls it answers$/,
          ),
        }),
      ]);
    });

    it('shows the chain in system-status and health', async () => {
      const status = await systemStatus(app);
      expect(status.network).toBe('subtensor');
      expect(status.components.chain).toMatchObject({
        status: 'healthy',
        chain_name: 'Bittensor',
        genesis_hash: FINNEY_GENESIS,
        block: 6_852_690,
      });
      expect((await health(app)).network).toBe('subtensor');
    });

    it('exports the connection, the standing and the read time in the metrics', async () => {
      const text = await scrape(app);
      expect(sample(text, 'gateway_chain_connected')).toBe(1);
      for (const standing of STANDINGS)
        expect(sample(text, 'gateway_hotkey_standing', { standing })).toBe(
          standing === 'not_registered' ? 1 : 0,
        );
      const readAt = sample(text, 'gateway_metagraph_last_read_timestamp_seconds')!;
      expect(readAt).toBeGreaterThanOrEqual(Math.floor(startedAt));
      expect(readAt).toBeLessThanOrEqual(Date.now() / 1000);
    });
  });
});
