import { mkdirSync, readFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { hexToU8a, isHex, u8aToHex } from '@polkadot/util';
import { createFileOnce } from '../../common/files/create-file-once';
import { KeyError, Sr25519Keypair } from './keypair';
import { errorCode } from '../../common/files/error-code';

/**
 * Bittensor wallet hotkey files as btwallet writes them
 * (`<wallet path>/<wallet>/hotkeys/<hotkey>`): JSON with `accountId`, `publicKey`, `privateKey`,
 * `secretPhrase`, `secretSeed` and `ss58Address`, unencrypted by default. btwallet loads the phrase
 * first, then the seed, then the private key; so does this. Errors name the file and the field,
 * never a secret.
 */

export interface WalletHotkeyFile {
  accountId?: string;
  publicKey?: string;
  privateKey?: string;
  secretPhrase?: string | null;
  secretSeed?: string;
  ss58Address: string;
}

export class WalletFileError extends Error {
  override readonly name = 'WalletFileError';
}

/** Prefixes of btwallet's encrypted keyfiles (NaCl, Ansible Vault, legacy Fernet). */
const ENCRYPTED = [
  ['$NACL', 'NaCl'],
  ['$ANSIBLE_VAULT', 'Ansible Vault'],
  ['gAAAAA', 'legacy'],
] as const;

export function readWalletHotkey(path: string): Sr25519Keypair {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    const code = errorCode(error);
    throw new WalletFileError(
      code === 'ENOENT' ? `no hotkey file at ${path}` : `cannot read ${path} (${code})`,
    );
  }
  return parseWalletHotkey(text, path);
}

/** `where` names the file in errors. */
export function parseWalletHotkey(text: string, where: string): Sr25519Keypair {
  const encrypted = ENCRYPTED.find(([prefix]) => text.startsWith(prefix));
  if (encrypted) {
    throw new WalletFileError(
      `${where} is encrypted (${encrypted[1]}); the gateway reads unencrypted hotkey files: ` +
        'regenerate the hotkey without encryption (btcli wallet regen-hotkey --no-use-password) or use VALIDATOR_HOTKEY_URI in development',
    );
  }
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch {
    throw new WalletFileError(`${where} is not a btwallet hotkey file (not JSON)`);
  }
  if (typeof data !== 'object' || data === null || Array.isArray(data))
    throw new WalletFileError(`${where} is not a btwallet hotkey file (not a JSON object)`);
  const file = data as Record<string, unknown>;
  const ss58 = file.ss58Address;
  if (typeof ss58 !== 'string' || ss58 === '')
    throw new WalletFileError(`${where} has no ss58Address to check the key against`);
  const keypair = keypairOf(file, where);
  if (keypair.address !== ss58) {
    throw new WalletFileError(
      `${where}: the key derives to ${keypair.address}, but the file says ss58Address ${ss58}`,
    );
  }
  return keypair;
}

function keypairOf(file: Record<string, unknown>, where: string): Sr25519Keypair {
  const { secretPhrase, secretSeed, privateKey } = file;
  try {
    if (isPresent(secretPhrase)) {
      if (typeof secretPhrase !== 'string') throw new KeyError('not a string');
      return Sr25519Keypair.fromUri(secretPhrase.trim());
    }
    if (isPresent(secretSeed)) return Sr25519Keypair.fromSeed(hexBytes(secretSeed, 32));
    if (isPresent(privateKey)) return Sr25519Keypair.fromSchnorrkelSecret(hexBytes(privateKey, 64));
  } catch (error) {
    const field = isPresent(secretPhrase)
      ? 'secretPhrase'
      : isPresent(secretSeed)
        ? 'secretSeed'
        : 'privateKey';
    throw new WalletFileError(`${where}: ${field} is unusable: ${(error as Error).message}`);
  }
  throw new WalletFileError(
    `${where} holds no secret (secretPhrase, secretSeed or privateKey): a public key cannot sign`,
  );
}

function isPresent(value: unknown): boolean {
  return value !== undefined && value !== null && value !== '';
}

function hexBytes(value: unknown, length: number): Uint8Array {
  if (typeof value !== 'string' || !isHex(value, length * 8))
    throw new KeyError(`expected 0x and ${length * 2} hex digits`);
  return hexToU8a(value);
}

/**
 * Writes a btwallet hotkey file (mode 0600, directories created) for a mnemonic or a 32-byte
 * seed, as btwallet lays it out, unless the file exists (another process sharing the directory
 * may have written it first); returns the key the file holds, and whether this call wrote it.
 */
export function createWalletHotkey(
  path: string,
  secret: { mnemonic: string } | { seed: Uint8Array },
): { keypair: Sr25519Keypair; created: boolean } {
  const keypair =
    'mnemonic' in secret
      ? Sr25519Keypair.fromUri(secret.mnemonic)
      : Sr25519Keypair.fromSeed(secret.seed);
  const publicKey = u8aToHex(keypair.publicKey);
  const file: WalletHotkeyFile = {
    accountId: publicKey,
    publicKey,
    ...('mnemonic' in secret
      ? { secretPhrase: secret.mnemonic }
      : { secretPhrase: null, secretSeed: u8aToHex(secret.seed) }),
    ss58Address: keypair.address,
  };
  mkdirSync(dirname(path), { recursive: true });
  if (createFileOnce(path, JSON.stringify(file), 0o600)) return { keypair, created: true };
  return { keypair: readWalletHotkey(path), created: false };
}
