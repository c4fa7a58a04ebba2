import { Sr25519Keypair } from '../network/bittensor/keypair';
import { parseCliArguments } from './cli';

const GATEWAY = Sr25519Keypair.fromUri('//Gateway').address;
const OTHER = Sr25519Keypair.fromUri('//Other').address;

describe('parseCliArguments', () => {
  it('has defaults', () => {
    expect(parseCliArguments([])).toEqual({
      miners: 8,
      seed: 1,
      host: '127.0.0.1',
      basePort: 0,
      metagraphFile: './.data/devnet/metagraph.json',
      validators: 2,
      validatorHotkeys: [],
      faults: new Map(),
    });
  });

  it('reads every option', () => {
    const options = parseCliArguments([
      '--miners',
      '4',
      '--seed',
      '9',
      '--host',
      'localhost',
      '--base-port',
      '9100',
      '--metagraph',
      '/tmp/m.json',
      '--validators',
      '0',
      '--validator-hotkeys',
      `${GATEWAY}, ${OTHER}`,
      '--faults',
      '2:hang,3:latency=10-20',
    ]);
    expect(options).toEqual({
      miners: 4,
      seed: 9,
      host: 'localhost',
      basePort: 9100,
      metagraphFile: '/tmp/m.json',
      validators: 0,
      validatorHotkeys: [GATEWAY, OTHER],
      faults: new Map([
        [2, { hang: true }],
        [3, { latencyMs: { min: 10, max: 20 } }],
      ]),
    });
    expect(parseCliArguments(['--help'])).toBe('help');
  });

  it('reads policies in the faults', () => {
    const options = parseCliArguments([
      '--faults',
      '0:no-ondemand,1:blacklist-all,1:no-strict-budget',
    ]);
    expect(options).toMatchObject({
      faults: new Map([
        [0, { noOnDemand: true }],
        [1, { blacklistAll: true, strictBudget: false }],
      ]),
    });
  });

  it('refuses bad values', () => {
    expect(() => parseCliArguments(['--host', '0.0.0.0'])).toThrow(/loopback/);
    expect(() => parseCliArguments(['--miners', 'many'])).toThrow(/miners/);
    expect(() => parseCliArguments(['--miners', '2', '--faults', '5:hang'])).toThrow(/uid 5/);
    expect(() => parseCliArguments(['--validator-hotkeys', 'gateway'])).toThrow(/ss58/);
    expect(() => parseCliArguments(['--unknown'])).toThrow();
  });
});
