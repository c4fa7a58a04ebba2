import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { u8aEq } from '@polkadot/util';
import { errorCode } from '../../common/files/error-code';
import { ValidatorKeySettings } from '../../config/app-config';
import { ConfigError } from '../../config/load-config';
import { cryptoReady, KeyError, publicKeyOfAddress, Sr25519Keypair } from './keypair';
import { createWalletHotkey, readWalletHotkey, WalletFileError } from './wallet-file';

export interface ValidatorKey {
  keypair: Sr25519Keypair;
  /** Where it came from, for the start-up banner (never the secret itself). */
  origin: string;
  /** True when this start generated it (development only). */
  created: boolean;
}

/** Name of the development key kept under DATA_DIR (a btwallet hotkey file). */
export const GENERATED_KEY_FILE = 'validator-hotkey';

/**
 * The validator's hotkey, which signs every call to miners. In order: VALIDATOR_HOTKEY_URI
 * (development and tests), the btwallet hotkey file named by BT_WALLET_PATH / BT_WALLET_NAME /
 * BT_WALLET_HOTKEY, or, in development and tests only, a key generated once under DATA_DIR.
 * VALIDATOR_HOTKEY, when set, must be the address the key derives to. Every problem is a
 * ConfigError naming the variable; none repeats a secret.
 */
export async function loadValidatorKey(
  settings: ValidatorKeySettings,
  nodeEnv: 'development' | 'production' | 'test',
  dataDir: string,
): Promise<ValidatorKey> {
  await cryptoReady();
  const key = selectKey(settings, nodeEnv, dataDir);
  if (settings.expectedHotkey !== undefined) checkExpected(settings.expectedHotkey, key);
  return key;
}

/**
 * VALIDATOR_HOTKEY names the key under any SS58 prefix or as its `0x` hex, as the rest of the
 * service reads an address (canonicalAddress). Compared as text, a broken checksum or a typo was
 * told "is X, but the key is Y" as a real mismatch, and the key's own address under prefix 0 was
 * refused (an identity audit).
 */
function checkExpected(expected: string, key: ValidatorKey): void {
  const named = publicKeyOfAddress(expected);
  if (!named)
    throw new ConfigError([
      `VALIDATOR_HOTKEY: ${expected} is not a hotkey's address (SS58 with its checksum intact, or 0x and 64 hex digits)`,
    ]);
  if (!u8aEq(named, key.keypair.publicKey))
    throw new ConfigError([
      `VALIDATOR_HOTKEY: is ${expected}, but the key from ${key.origin} is ${key.keypair.address}`,
    ]);
}

function selectKey(
  settings: ValidatorKeySettings,
  nodeEnv: 'development' | 'production' | 'test',
  dataDir: string,
): ValidatorKey {
  const { uri, wallet } = settings;
  if (uri !== undefined) {
    if (nodeEnv === 'production')
      throw new ConfigError([
        'VALIDATOR_HOTKEY_URI: for development and tests only; in production use a wallet hotkey file (BT_WALLET_PATH, BT_WALLET_NAME, BT_WALLET_HOTKEY)',
      ]);
    if (wallet.explicit)
      throw new ConfigError([
        'VALIDATOR_HOTKEY_URI: set either it or BT_WALLET_PATH / BT_WALLET_NAME / BT_WALLET_HOTKEY, not both',
      ]);
    try {
      return {
        keypair: Sr25519Keypair.fromUri(uri),
        origin: 'VALIDATOR_HOTKEY_URI',
        created: false,
      };
    } catch (error) {
      throw new ConfigError([`VALIDATOR_HOTKEY_URI: ${(error as KeyError).message}`]);
    }
  }
  const file = join(wallet.path, wallet.name, 'hotkeys', wallet.hotkey);
  if (existsSync(file) || wallet.explicit || nodeEnv === 'production')
    return { keypair: readWallet(file), origin: `wallet file ${file}`, created: false };
  return generatedKey(join(dataDir, GENERATED_KEY_FILE));
}

function readWallet(file: string): Sr25519Keypair {
  try {
    return readWalletHotkey(file);
  } catch (error) {
    if (!(error instanceof WalletFileError)) throw error;
    throw new ConfigError([`BT_WALLET_PATH / BT_WALLET_NAME / BT_WALLET_HOTKEY: ${error.message}`]);
  }
}

/** Development only: one key per data directory, kept as a btwallet file (mode 0600). */
function generatedKey(file: string): ValidatorKey {
  const origin = `development key file ${file}`;
  if (existsSync(file)) return { keypair: readWallet(file), origin, created: false };
  try {
    return {
      ...createWalletHotkey(file, { mnemonic: Sr25519Keypair.generate().mnemonic }),
      origin,
    };
  } catch (error) {
    if (error instanceof WalletFileError) throw error;
    // A full disk failed the start with a stack naming no file (a filesystem faults audit).
    throw new ConfigError([
      `DATA_DIR: cannot write the development validator key file ${file} (${errorCode(error)}): free space ` +
        'or fix DATA_DIR, or name a wallet hotkey (BT_WALLET_*)',
    ]);
  }
}
