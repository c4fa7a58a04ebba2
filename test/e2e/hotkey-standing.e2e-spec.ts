import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { writeMetagraphFile } from '../../src/devnet/metagraph';
import { MetagraphService } from '../../src/network/metagraph/metagraph.service';
import { MetagraphNeuron } from '../../src/network/protocol';
import { metagraphNeuron } from '../support/neurons';
import {
  startTestApp,
  TEST_MASTER_KEY,
  TEST_VALIDATOR_URI,
  TestApp,
  testValidatorHotkey,
} from '../support/test-app';
import { LogCapture } from '../support/log-capture';

/** The messages logged at a pino level (30 info, 40 warn). */
function messagesAt(capture: LogCapture, level: number): string[] {
  return capture
    .lines<{ level: number; msg: string }>()
    .filter((line) => line.level === level)
    .map((line) => line.msg);
}

/**
 * Miners answer validators only (a permit and 10,000 TAO): a gateway whose own hotkey is not one
 * would have every call refused. The metagraph sync says so once per change, and system-status
 * shows it.
 */
describe("The gateway's own hotkey on the subnet", () => {
  const directory = mkdtempSync(join(tmpdir(), 'hotkey-standing-'));
  const file = join(directory, 'metagraph.json');
  const capture = new LogCapture();
  let app: TestApp;

  const writeWithOwn = (own: Partial<MetagraphNeuron> | null) =>
    writeMetagraphFile(file, {
      netuid: 13,
      block: 100,
      updated_at: new Date().toISOString(),
      neurons: [
        metagraphNeuron(0),
        ...(own
          ? [
              metagraphNeuron(1, {
                hotkey: testValidatorHotkey(),
                coldkey: 'gateway-coldkey',
                axon_url: null,
                ...own,
              }),
            ]
          : []),
      ],
    });
  const sync = () => app.app.get(MetagraphService).sync();
  const minersStatus = async () => {
    // Past the 1 s cache of the health checks.
    await new Promise((resolve) => setTimeout(resolve, 1100));
    const response = await app.http
      .get('/api/v1/monitoring/system-status')
      .set('X-API-Key', TEST_MASTER_KEY)
      .expect(200);
    return response.body.components.miners as {
      status: string;
      error?: string;
      hotkey_standing: string | null;
    };
  };

  const vote = () =>
    app.http
      .post('/api/v1/set_desirabilities')
      .set('X-API-Key', TEST_MASTER_KEY)
      .send({
        desirabilities: [
          { id: 'standing-x', weight: 1, params: { platform: 'x', label: '#standing' } },
        ],
      })
      .expect(200);

  beforeAll(async () => {
    await writeWithOwn(null);
    app = await startTestApp(
      { METAGRAPH_FILE: file, LOG_LEVEL: 'info', INDEX_SYNC_ON_START: 'false' },
      { ownDatabase: true, logDestination: capture },
    );
  });
  afterAll(async () => {
    await app.close();
    rmSync(directory, { recursive: true, force: true });
  });

  it('warns once when the hotkey is not registered, and reports it in system-status', async () => {
    await sync();
    await sync();
    const notRegistered = messagesAt(capture, 40).filter((line) => /not registered/.test(line));
    expect(notRegistered).toEqual([
      `this gateway's hotkey ${testValidatorHotkey()} is not registered on netuid 13, ` +
        'so miners refuse every call (403) and its call budgets are spent for nothing',
    ]);
    expect(await minersStatus()).toMatchObject({
      status: 'degraded',
      hotkey_standing: 'not_registered',
      error: notRegistered[0],
    });
  });

  it("saves a vote while the hotkey is no validator, and says the network counts validators' votes only", async () => {
    const response = await vote();
    expect(response.body.message).toMatch(
      /; this gateway's hotkey is not a validator on netuid 13 now \(not_registered, see GET \/api\/v1\/monitoring\/system-status\): the network counts validators' votes only$/,
    );
    expect(response.body.tasks).toEqual(['standing-x']);
  });

  it('warns again on each change: a permit with too little stake, then no permit', async () => {
    await writeWithOwn({ validator_permit: true, stake: 5_770 });
    await sync();
    expect(await minersStatus()).toMatchObject({ hotkey_standing: 'stake_too_low' });
    await writeWithOwn({ validator_permit: false, stake: 50_000 });
    await sync();
    await sync();
    expect(await minersStatus()).toMatchObject({ hotkey_standing: 'no_permit' });
    const warnings = messagesAt(capture, 40);
    expect(
      warnings.filter((line) => /5770 α of stake weight on netuid 13, under the 10000/.test(line)),
    ).toHaveLength(1);
    expect(warnings.filter((line) => /has no validator permit/.test(line))).toHaveLength(1);
  });

  it('is healthy as a validator, says so once with its uid, permit and stake, and never logs the key', async () => {
    await writeWithOwn({ validator_permit: true, stake: 50_000.123 });
    await sync();
    await sync();
    const status = await minersStatus();
    expect(status).toMatchObject({ status: 'healthy', hotkey_standing: 'validator' });
    expect(status.error).toBeUndefined();
    expect(messagesAt(capture, 30).filter((line) => /this gateway's hotkey/.test(line))).toEqual([
      `this gateway's hotkey ${testValidatorHotkey()} is a validator on netuid 13: ` +
        'uid 1, validator permit, stake 50000.12 α (stake weight)',
    ]);
    expect(capture.text).not.toContain(TEST_VALIDATOR_URI);
    expect((await vote()).body.message).not.toMatch(/not a validator/);
  });
});
