import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, truncateSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { hexToU8a, u8aToHex } from '@polkadot/util';
import { encodeAddress, mnemonicToMiniSecret } from '@polkadot/util-crypto';
import { loadVectors } from '../../../test/support/bittensor-fixtures';
import { cryptoReady, SS58_FORMAT } from './keypair';
import { createWalletHotkey, readWalletHotkey } from './wallet-file';

const { btwallet, sr25519 } = loadVectors();

describe(readWalletHotkey.name, () => {
  let directory: string;
  beforeAll(() => cryptoReady());
  beforeEach(() => {
    directory = mkdtempSync(join(tmpdir(), 'wallet-'));
  });
  afterEach(() => rmSync(directory, { recursive: true, force: true }));

  /** Writes a hotkey file the way btwallet serializes one (JSON, 0x-prefixed hex). */
  const write = (content: string | object): string => {
    const path = join(directory, 'hotkey');
    writeFileSync(path, typeof content === 'string' ? content : JSON.stringify(content));
    return path;
  };
  const privateKeyAddress = encodeAddress(
    hexToU8a(btwallet.public_key_of_that_privateKey),
    SS58_FORMAT,
  );

  it('loads the phrase form to the address btwallet derives', () => {
    const path = write({ secretPhrase: btwallet.mnemonic, ss58Address: btwallet.ss58 });
    expect(readWalletHotkey(path).address).toBe(btwallet.ss58);
  });

  it('loads the seed form', () => {
    const seed = u8aToHex(mnemonicToMiniSecret(btwallet.mnemonic));
    const path = write({ secretPhrase: null, secretSeed: seed, ss58Address: btwallet.ss58 });
    expect(readWalletHotkey(path).address).toBe(btwallet.ss58);
  });

  it('loads the private-key form (schnorrkel canonical bytes)', () => {
    const path = write({
      accountId: btwallet.public_key_of_that_privateKey,
      publicKey: btwallet.public_key_of_that_privateKey,
      privateKey: btwallet.privateKey_schnorrkel_canonical,
      ss58Address: privateKeyAddress,
    });
    expect(readWalletHotkey(path).address).toBe(privateKeyAddress);
  });

  it('prefers the phrase, then the seed, then the private key, as btwallet does', () => {
    const path = write({
      secretPhrase: btwallet.mnemonic,
      secretSeed: u8aToHex(new Uint8Array(32).fill(7)),
      privateKey: btwallet.privateKey_schnorrkel_canonical,
      ss58Address: btwallet.ss58,
    });
    expect(readWalletHotkey(path).address).toBe(btwallet.ss58);
  });

  it('refuses an encrypted file, saying so', () => {
    const path = write(`$NACL${'x'.repeat(80)}`);
    expect(() => readWalletHotkey(path)).toThrow(/is encrypted \(NaCl\)/);
    expect(() => readWalletHotkey(write('$ANSIBLE_VAULT;1.1;AES256\n6162'))).toThrow(/encrypted/);
    expect(() => readWalletHotkey(write(`gAAAAA${'x'.repeat(80)}`))).toThrow(
      /is encrypted \(legacy\)/,
    );
  });

  it('loads a phrase written with whitespace around it', () => {
    const path = write({ secretPhrase: `${btwallet.mnemonic}\n`, ss58Address: btwallet.ss58 });
    expect(readWalletHotkey(path).address).toBe(btwallet.ss58);
  });

  it('takes an empty secretPhrase as none, and loads the seed', () => {
    const seed = u8aToHex(mnemonicToMiniSecret(btwallet.mnemonic));
    const path = write({ secretPhrase: '', secretSeed: seed, ss58Address: btwallet.ss58 });
    expect(readWalletHotkey(path).address).toBe(btwallet.ss58);
  });

  it('refuses a key that does not derive to the file ss58Address', () => {
    const alice = sr25519.dev_alice_ss58;
    const path = write({ secretPhrase: btwallet.mnemonic, ss58Address: alice });
    expect(() => readWalletHotkey(path)).toThrow(
      `the key derives to ${btwallet.ss58}, but the file says ss58Address ${alice}`,
    );
  });

  it.each<[string, string | object, RegExp]>([
    ['not JSON', 'secretPhrase=...', /not JSON/],
    ['a list', '[]', /not a JSON object/],
    ['without ss58Address', { secretPhrase: 'x' }, /no ss58Address/],
    ['without a secret', { publicKey: '0x00', ss58Address: '5F' }, /holds no secret/],
    ['with a short seed', { secretSeed: '0x1234', ss58Address: '5F' }, /secretSeed is unusable/],
    ['with a bad phrase', { secretPhrase: 'one two three', ss58Address: '5F' }, /secretPhrase/],
  ])('refuses a file %s, naming what is wrong', (_, content, expected) => {
    expect(() => readWalletHotkey(write(content))).toThrow(expected);
  });

  it('never repeats the secret in its errors', () => {
    const path = write({ secretPhrase: `${btwallet.mnemonic} extra`, ss58Address: btwallet.ss58 });
    expect(() => readWalletHotkey(path)).toThrow(/secretPhrase is unusable/);
    try {
      readWalletHotkey(path);
    } catch (error) {
      expect((error as Error).message).not.toContain('leopard');
    }
  });

  it('says when the file is missing', () => {
    expect(() => readWalletHotkey(join(directory, 'absent'))).toThrow(/no hotkey file at/);
  });

  it('takes the file ss58Address under another SS58 prefix as the same key', () => {
    const polkadotForm = encodeAddress(hexToU8a(btwallet.public_key_of_that_privateKey), 0);
    const path = write({
      privateKey: btwallet.privateKey_schnorrkel_canonical,
      ss58Address: polkadotForm,
    });
    expect(readWalletHotkey(path).address).toBe(privateKeyAddress);
  });

  it('says when the file ss58Address is no address, rather than another key', () => {
    const broken = `${btwallet.ss58.slice(0, -1)}${btwallet.ss58.endsWith('a') ? 'b' : 'a'}`;
    const path = write({ secretPhrase: btwallet.mnemonic, ss58Address: broken });
    expect(() => readWalletHotkey(path)).toThrow(
      `ss58Address ${broken} is not an address (SS58 with its checksum intact)`,
    );
  });

  it('refuses a file that starts with a byte order mark, naming it', () => {
    const path = write(
      `\uFEFF${JSON.stringify({ secretPhrase: btwallet.mnemonic, ss58Address: btwallet.ss58 })}`,
    );
    expect(() => readWalletHotkey(path)).toThrow(/byte order mark \(UTF-8 BOM\)/);
  });

  it('refuses a FIFO without waiting for a writer', () => {
    const path = join(directory, 'fifo');
    execFileSync('mkfifo', [path]);
    expect(() => readWalletHotkey(path)).toThrow(`${path} is not a hotkey file: it is a FIFO`);
  });

  it('refuses a directory', () => {
    const path = join(directory, 'hotkeys');
    mkdirSync(path);
    expect(() => readWalletHotkey(path)).toThrow(`${path} is not a hotkey file: it is a directory`);
  });

  it('refuses a file far larger than a hotkey file, before reading it', () => {
    const path = write('');
    truncateSync(path, 512 * 1024 * 1024);
    expect(() => readWalletHotkey(path)).toThrow(`it is ${512 * 1024 * 1024} bytes`);
  });
});

describe(createWalletHotkey.name, () => {
  let directory: string;
  beforeAll(() => cryptoReady());
  beforeEach(() => (directory = mkdtempSync(join(tmpdir(), 'wallet-'))));
  afterEach(() => rmSync(directory, { recursive: true, force: true }));

  it('writes a file btwallet and readWalletHotkey read, in directories it creates', () => {
    const path = join(directory, 'default', 'hotkeys', 'default');
    const { keypair, created } = createWalletHotkey(path, { mnemonic: btwallet.mnemonic });
    expect(created).toBe(true);
    expect(keypair.address).toBe(btwallet.ss58);
    expect(readWalletHotkey(path).address).toBe(btwallet.ss58);
  });

  it('keeps the key of a file written first (a process sharing the directory), and returns it', () => {
    const path = join(directory, 'hotkey');
    createWalletHotkey(path, { mnemonic: btwallet.mnemonic });
    const second = createWalletHotkey(path, { seed: new Uint8Array(32).fill(7) });
    expect(second.created).toBe(false);
    expect(second.keypair.address).toBe(btwallet.ss58);
  });
});
