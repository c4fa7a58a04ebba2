import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { Sr25519Keypair } from '../network/bittensor/keypair';
import { readWalletHotkey } from '../network/bittensor/wallet-file';
import { parseCliArguments, startFailure, USAGE } from './cli';
import { writeGatewayWallet } from './gateway-wallet';

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
      gatewayWallet: undefined,
      faults: new Map(),
      storedOnly: false,
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
      '--gateway-wallet',
      '/wallets',
      '--faults',
      '2:hang,3:latency=10-20',
      '--stored-only',
    ]);
    expect(options).toEqual({
      miners: 4,
      seed: 9,
      host: 'localhost',
      basePort: 9100,
      metagraphFile: '/tmp/m.json',
      validators: 0,
      validatorHotkeys: [GATEWAY, OTHER],
      gatewayWallet: '/wallets',
      faults: new Map([
        [2, { hang: true }],
        [3, { latencyMs: { min: 10, max: 20 } }],
      ]),
      storedOnly: true,
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
    expect(() => parseCliArguments(['--validator-hotkeys', ''])).toThrow(/is empty/);
    expect(() => parseCliArguments(['--validator-hotkeys', ' , '])).toThrow(/is empty/);
    expect(() => parseCliArguments(['--unknown'])).toThrow();
    expect(() => parseCliArguments(['--stored-only=yes'])).toThrow();
    // Beyond Node's longest timer, a latency would have fired after 1 ms.
    expect(() => parseCliArguments(['--faults', '0:latency=3000000000'])).toThrow(
      /latency must be between 0 and 2147483647 ms/,
    );
  });

  // Miner i listens on base-port + i: with 8 miners, 65528 puts the last on 65535 (it was
  // refused, the bound one short), and 65529 would put it on 65536, which no socket takes.
  it('takes a base port up to the one whose last miner listens on 65535', () => {
    const options = parseCliArguments(['--miners', '8', '--base-port', '65528']);
    expect(options !== 'help' && options.basePort).toBe(65_528);
    expect(() => parseCliArguments(['--miners', '8', '--base-port', '65529'])).toThrow(
      '--base-port must be an integer between 0 and 65528, got "65529"',
    );
    const one = parseCliArguments(['--miners', '1', '--base-port', '65535']);
    expect(one !== 'help' && one.basePort).toBe(65_535);
    expect(() => parseCliArguments(['--miners', '1', '--base-port', '65536'])).toThrow(
      /between 0 and 65535/,
    );
  });

  it('takes DEVNET_STORED_ONLY=true from the environment as --stored-only', () => {
    const options = parseCliArguments([], { DEVNET_STORED_ONLY: 'true' });
    expect(options !== 'help' && options.storedOnly).toBe(true);
    const plain = parseCliArguments([], { DEVNET_STORED_ONLY: 'false' });
    expect(plain !== 'help' && plain.storedOnly).toBe(false);
    // Blank is unset, as the gateway reads it (docker-compose passes
    // `${DEVNET_STORED_ONLY:-false}`).
    const blank = parseCliArguments([], { DEVNET_STORED_ONLY: ' ' });
    expect(blank !== 'help' && blank.storedOnly).toBe(false);
    // The same .env feeds the gateway, which reads every value without the white space at its ends.
    const spaced = parseCliArguments([], { DEVNET_STORED_ONLY: ' true ' });
    expect(spaced !== 'help' && spaced.storedOnly).toBe(true);
  });

  // `yes` or `1` was read as false: miners answering on-demand queries the operator had asked
  // to answer 404, and nothing said so.
  it.each(['yes', '1', 'TRUE', 'on'])('refuses DEVNET_STORED_ONLY=%s, naming it', (value) => {
    expect(() => parseCliArguments([], { DEVNET_STORED_ONLY: value })).toThrow(
      `DEVNET_STORED_ONLY must be true or false, got "${value}"`,
    );
    expect(() => parseCliArguments(['--stored-only'], { DEVNET_STORED_ONLY: value })).toThrow(
      /DEVNET_STORED_ONLY/,
    );
  });

  // The help is what an operator reads to find out what went wrong with the environment.
  it.each(['--help', '-h'])('answers %s even beside a bad DEVNET_STORED_ONLY', (flag) => {
    expect(parseCliArguments([flag], { DEVNET_STORED_ONLY: 'yes' })).toBe('help');
  });
});

describe('USAGE', () => {
  it('lists the exit statuses a script can act on', () => {
    expect(USAGE).toMatch(/Exit status: 0 .*, 1 .*, 2 bad options or DEVNET_STORED_ONLY/s);
  });
});

describe('startFailure', () => {
  const options = (argv: string[]) => {
    const parsed = parseCliArguments(argv);
    if (parsed === 'help') throw new Error('not options');
    return parsed;
  };
  const failure = (message: string, fields: Partial<NodeJS.ErrnoException>) =>
    Object.assign(new Error(message), fields);

  it('names --base-port when a miner cannot listen on its port', () => {
    const error = failure('listen EADDRINUSE: address already in use 127.0.0.1:41041', {
      code: 'EADDRINUSE',
      syscall: 'listen',
    });
    expect(startFailure(error, options(['--base-port', '41040']))).toBe(
      'devnet: --base-port 41040: listen EADDRINUSE: address already in use 127.0.0.1:41041 ' +
        '(miner uid listens on --base-port + uid: choose another --base-port, or 0 for free ports)',
    );
  });

  it('names --metagraph when its directory cannot be made or written', () => {
    const given = join(tmpdir(), 'a-file', 'metagraph.json');
    const mkdir = failure(`EEXIST: file already exists, mkdir '${dirname(given)}'`, {
      code: 'EEXIST',
      syscall: 'mkdir',
      path: dirname(given),
    });
    expect(startFailure(mkdir, options(['--metagraph', given]))).toBe(
      `devnet: --metagraph ${given}: ${mkdir.message}`,
    );
    const parent = failure('ENOTDIR', { code: 'ENOTDIR', syscall: 'mkdir', path: tmpdir() });
    expect(startFailure(parent, options(['--metagraph', given]))).toMatch(/^devnet: --metagraph /);
  });

  it('names --gateway-wallet for its own files, and nothing for an unrelated failure', () => {
    const wallet = join(tmpdir(), 'wallets');
    const error = failure('EACCES', { code: 'EACCES', syscall: 'open', path: join(wallet, 'x') });
    expect(startFailure(error, options(['--gateway-wallet', wallet]))).toBe(
      `devnet: --gateway-wallet ${wallet}: EACCES`,
    );
    expect(startFailure(new Error('boom'), options([]))).toBe('devnet: boom');
  });
});

describe('writeGatewayWallet', () => {
  it('writes a btwallet hotkey file once, and reads it back afterwards', () => {
    const directory = mkdtempSync(join(tmpdir(), 'gateway-wallet-'));
    try {
      const hotkey = writeGatewayWallet(directory, 3);
      const path = join(directory, 'devnet', 'hotkeys', 'gateway');
      expect(readWalletHotkey(path).address).toBe(hotkey);
      expect(statSync(path).mode & 0o777).toBe(0o600);
      expect(writeGatewayWallet(directory, 3)).toBe(hotkey);
      // Another seed, another key: but a file already there is kept.
      expect(writeGatewayWallet(directory, 4)).toBe(hotkey);
    } finally {
      rmSync(directory, { recursive: true, force: true });
    }
  });
});
