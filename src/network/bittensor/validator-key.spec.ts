import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import os, { tmpdir } from 'node:os';
import { join } from 'node:path';
import { u8aToHex } from '@polkadot/util';
import { decodeAddress, encodeAddress } from '@polkadot/util-crypto';
import { loadVectors } from '../../../test/support/bittensor-fixtures';
import { ValidatorKeySettings } from '../../config/app-config';
import { ConfigError, loadConfig } from '../../config/load-config';
import { GENERATED_KEY_FILE, loadValidatorKey } from './validator-key';

const { btwallet, sr25519 } = loadVectors();

describe(loadValidatorKey.name, () => {
  let directory: string;
  beforeEach(() => {
    directory = mkdtempSync(join(tmpdir(), 'validator-key-'));
  });
  afterEach(() => {
    jest.restoreAllMocks();
    rmSync(directory, { recursive: true, force: true });
  });

  const settings = (overrides: Partial<ValidatorKeySettings> = {}, explicit = false) => ({
    uri: undefined,
    expectedHotkey: undefined,
    wallet: { path: join(directory, 'wallets'), name: 'default', hotkey: 'default', explicit },
    ...overrides,
  });
  const writeWallet = (name: string, hotkey: string, content: object) => {
    const hotkeys = join(directory, 'wallets', name, 'hotkeys');
    mkdirSync(hotkeys, { recursive: true });
    writeFileSync(join(hotkeys, hotkey), JSON.stringify(content));
  };
  const problems = async (promise: Promise<unknown>): Promise<string[]> => {
    const error = await promise.then(
      () => undefined,
      (caught: unknown) => caught,
    );
    expect(error).toBeInstanceOf(ConfigError);
    return (error as ConfigError).problems;
  };

  it('takes VALIDATOR_HOTKEY_URI in development and tests', async () => {
    const key = await loadValidatorKey(settings({ uri: '//Alice' }), 'test', directory);
    expect(key.keypair.address).toBe(sr25519.dev_alice_ss58);
    expect(key.origin).toBe('VALIDATOR_HOTKEY_URI');
  });

  it('refuses VALIDATOR_HOTKEY_URI in production, and beside wallet variables', async () => {
    expect(
      await problems(loadValidatorKey(settings({ uri: '//Alice' }), 'production', directory)),
    ).toEqual([expect.stringMatching(/^VALIDATOR_HOTKEY_URI: for development and tests only/)]);
    expect(
      await problems(loadValidatorKey(settings({ uri: '//Alice' }, true), 'test', directory)),
    ).toEqual([expect.stringMatching(/not both/)]);
  });

  it('reads the named wallet hotkey file', async () => {
    writeWallet('validator', 'hot', {
      secretPhrase: btwallet.mnemonic,
      ss58Address: btwallet.ss58,
    });
    const wallet = {
      path: join(directory, 'wallets'),
      name: 'validator',
      hotkey: 'hot',
      explicit: true,
    };
    const key = await loadValidatorKey(settings({ wallet }), 'production', directory);
    expect(key.keypair.address).toBe(btwallet.ss58);
    expect(key.origin).toBe(
      `wallet file ${join(directory, 'wallets', 'validator', 'hotkeys', 'hot')}`,
    );
  });

  it('refuses a missing or encrypted wallet file in production, naming the variables', async () => {
    expect(await problems(loadValidatorKey(settings(), 'production', directory))).toEqual([
      expect.stringMatching(
        /^BT_WALLET_PATH \/ BT_WALLET_NAME \/ BT_WALLET_HOTKEY: no hotkey file at/,
      ),
    ]);
    const hotkeys = join(directory, 'wallets', 'default', 'hotkeys');
    mkdirSync(hotkeys, { recursive: true });
    writeFileSync(join(hotkeys, 'default'), '$NACL0123456789');
    expect(await problems(loadValidatorKey(settings(), 'production', directory))).toEqual([
      expect.stringMatching(/is encrypted \(NaCl\)/),
    ]);
  });

  it('generates a development key once, keeps it private under DATA_DIR, and reuses it', async () => {
    const first = await loadValidatorKey(settings(), 'development', directory);
    expect(first.created).toBe(true);
    const file = join(directory, GENERATED_KEY_FILE);
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(JSON.parse(readFileSync(file, 'utf8'))).toMatchObject({
      ss58Address: first.keypair.address,
      secretPhrase: expect.any(String),
    });
    const second = await loadValidatorKey(settings(), 'development', directory);
    expect(second).toMatchObject({ created: false });
    expect(second.keypair.address).toBe(first.keypair.address);
  });

  // A full disk failed the start with a stack naming no file (a filesystem faults audit); a
  // DATA_DIR under a file fails the write as surely.
  it('says in one line which file it could not write, and why, when the development key cannot be', async () => {
    const blocked = join(directory, 'a-file');
    writeFileSync(blocked, '');
    expect(
      await problems(loadValidatorKey(settings(), 'development', join(blocked, 'data'))),
    ).toEqual([
      `DATA_DIR: cannot write the development validator key file ${join(blocked, 'data', GENERATED_KEY_FILE)} ` +
        '(ENOTDIR): free space or fix DATA_DIR, or name a wallet hotkey (BT_WALLET_*)',
    ]);
  });

  it('uses the default wallet hotkey file in development when it exists, instead of generating one', async () => {
    writeWallet('default', 'default', {
      secretPhrase: btwallet.mnemonic,
      ss58Address: btwallet.ss58,
    });

    const key = await loadValidatorKey(settings(), 'development', directory);

    expect(key).toMatchObject({ created: false, origin: expect.stringMatching(/^wallet file /) });
    expect(key.keypair.address).toBe(btwallet.ss58);
    expect(existsSync(join(directory, GENERATED_KEY_FILE))).toBe(false);
  });

  // BT_WALLET_PATH's default is `~/.bittensor/wallets`, as btwallet writes it.
  it('reads a wallet path starting with ~ from the home directory', async () => {
    writeWallet('default', 'default', {
      secretPhrase: btwallet.mnemonic,
      ss58Address: btwallet.ss58,
    });
    // The home directory of a test run is not the developer's: os.homedir is told it.
    jest.spyOn(os, 'homedir').mockReturnValue(directory);
    // loadConfig expands it (config/home-path.ts), as every path setting's.
    const { validatorKey } = loadConfig({ NODE_ENV: 'test', BT_WALLET_PATH: '~/wallets' });

    const key = await loadValidatorKey(validatorKey, 'production', directory);

    expect(key.keypair.address).toBe(btwallet.ss58);
  });

  it('does not generate one when wallet variables name a missing file', async () => {
    await problems(loadValidatorKey(settings({}, true), 'development', directory));
    expect(existsSync(join(directory, GENERATED_KEY_FILE))).toBe(false);
  });

  it('checks VALIDATOR_HOTKEY against the derived address', async () => {
    const expected = await loadValidatorKey(
      settings({ uri: '//Alice', expectedHotkey: sr25519.dev_alice_ss58 }),
      'test',
      directory,
    );
    expect(expected.keypair.address).toBe(sr25519.dev_alice_ss58);
    expect(
      await problems(
        loadValidatorKey(
          settings({ uri: '//Bob', expectedHotkey: sr25519.dev_alice_ss58 }),
          'test',
          directory,
        ),
      ),
    ).toEqual([
      expect.stringMatching(
        new RegExp(
          `^VALIDATOR_HOTKEY: is ${sr25519.dev_alice_ss58}, but the key from VALIDATOR_HOTKEY_URI is 5`,
        ),
      ),
    ]);
  });

  it('reads VALIDATOR_HOTKEY as an address: another prefix or the 0x key is the same key', async () => {
    const alice = decodeAddress(sr25519.dev_alice_ss58);
    for (const expectedHotkey of [encodeAddress(alice, 0), u8aToHex(alice)]) {
      const key = await loadValidatorKey(
        settings({ uri: '//Alice', expectedHotkey }),
        'test',
        directory,
      );
      expect(key.keypair.address).toBe(sr25519.dev_alice_ss58);
    }
  });

  it('says when VALIDATOR_HOTKEY is not an address, rather than another key', async () => {
    const broken = `${sr25519.dev_alice_ss58.slice(0, -1)}Z`;
    for (const expectedHotkey of [broken, 'garbage']) {
      expect(
        await problems(
          loadValidatorKey(settings({ uri: '//Alice', expectedHotkey }), 'test', directory),
        ),
      ).toEqual([
        `VALIDATOR_HOTKEY: ${expectedHotkey} is not a hotkey's address (SS58 with its checksum intact, or 0x and 64 hex digits)`,
      ]);
    }
  });

  it('never repeats a secret URI in its errors', async () => {
    const secret = 'correct horse battery staple';
    const [problem] = await problems(
      loadValidatorKey(settings({ uri: secret }), 'test', directory),
    );
    expect(problem).toMatch(/^VALIDATOR_HOTKEY_URI: /);
    expect(problem).not.toContain('horse');
  });
});
