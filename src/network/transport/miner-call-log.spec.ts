import { createServer, Server } from 'node:http';
import { AddressInfo } from 'node:net';
import { Clock } from '../../common/clock/clock';
import { MetricsService } from '../../common/metrics/metrics.service';
import { loadConfig } from '../../config/load-config';
import { cryptoReady, Sr25519Keypair } from '../bittensor/keypair';
import { ValidatorIdentity } from '../bittensor/validator-identity';
import { getMinerIndexFields } from '../sn13/messages';
import { CallBudgets } from './call-budgets';
import { MinerClient } from './miner-client';
import { linesLoggedBy, LogLine } from '../../../test/support/logging-context';

const MINER = Sr25519Keypair.fromUri('//Miner').address;
/** What the fake axon answers: the synapse back with its (empty) index. */
const ANSWER = JSON.stringify({ name: 'GetMinerIndex', data: [] });

/**
 * An operator's audit: LOG_LEVEL=debug added nothing, since nothing logged below info. A miner
 * call's line at debug, through the app's own loggers (LoggingModule, Nest's Logger), and none
 * at info.
 */
describe('The debug line of a miner call', () => {
  let server: Server;
  let status = 200;
  let granted = true;

  beforeAll(async () => {
    await cryptoReady();
    server = createServer((request, response) => {
      request.resume();
      request.on('end', () => {
        response.writeHead(status, { 'content-type': 'application/json' });
        response.end(status === 200 ? ANSWER : JSON.stringify({ message: 'busy' }));
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  });
  afterAll(() => new Promise((resolve) => server.close(resolve)));
  beforeEach(() => {
    status = 200;
    granted = true;
  });

  /** Calls the fake axon once with Nest's Logger writing through LoggingModule at `level`. */
  function linesOfCall(level: string): Promise<LogLine[]> {
    return linesLoggedBy(MinerClient.name, level, async () => {
      const budgets = {
        take: () => Promise.resolve({ granted, kept: false, freeAt: null, at: new Date() }),
        giveBack: () => Promise.resolve(),
        spend: () => Promise.resolve(undefined),
      };
      const client = new MinerClient(
        loadConfig({}),
        new MetricsService(),
        new ValidatorIdentity(Sr25519Keypair.fromUri('//Gateway')),
        budgets as unknown as CallBudgets,
        new Clock(),
      );
      try {
        const axonUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
        await client
          .call({ uid: 7, hotkey: MINER, axonUrl }, 'GetMinerIndex', getMinerIndexFields(), 2_000)
          .catch(() => undefined);
      } finally {
        client.onModuleDestroy();
      }
    });
  }

  it('says who was called, the synapse, how it ended, how long it took and the bytes', async () => {
    const lines = await linesOfCall('debug');
    expect(lines).toEqual([
      expect.objectContaining({
        level: 20,
        uid: 7,
        hotkey: `${MINER.slice(0, 8)}…`,
        synapse: 'GetMinerIndex',
        purpose: 'user',
        outcome: 'ok',
        bytes: Buffer.byteLength(ANSWER),
        duration_ms: expect.any(Number),
        msg: expect.stringMatching(
          new RegExp(
            `^miner 7 \\(${MINER.slice(0, 8)}…\\) GetMinerIndex: ok in \\d+ ms, \\d+ bytes$`,
          ),
        ),
      }),
    ]);
    // Never the full hotkey nor the request's fields or the answer's contents.
    expect(JSON.stringify(lines)).not.toContain(MINER);
    expect(JSON.stringify(lines)).not.toContain('"data"');
  });

  it("says a failed call's reason and message", async () => {
    status = 503;
    expect(await linesOfCall('debug')).toEqual([
      expect.objectContaining({
        level: 20,
        uid: 7,
        synapse: 'GetMinerIndex',
        outcome: 'busy',
        sent: true,
        error: 'the axon is busy (503)',
        duration_ms: expect.any(Number),
      }),
    ]);
  });

  it('says a call was not made because the budget is spent', async () => {
    granted = false;
    const lines = await linesOfCall('debug');
    expect(lines.map((line) => line.msg)).toEqual([
      `miner 7 (${MINER.slice(0, 8)}…) GetMinerIndex: not called, no call left in its budget`,
      expect.stringMatching(/GetMinerIndex: no_budget after \d+ ms: no GetMinerIndex call left/),
    ]);
    expect(lines[1]).toMatchObject({ outcome: 'no_budget', sent: false });
  });

  it('writes none at info', async () => {
    expect(await linesOfCall('info')).toEqual([]);
    status = 503;
    granted = false;
    expect(await linesOfCall('info')).toEqual([]);
  });
});
