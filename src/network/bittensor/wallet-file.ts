import { closeSync, constants, fstatSync, mkdirSync, openSync, readFileSync, Stats } from 'node:fs';
import { dirname } from 'node:path';
import { hexToU8a, isHex, u8aEq, u8aToHex } from '@polkadot/util';
import { createFileOnce } from '../../common/files/create-file-once';
import { KeyError, publicKeyOfAddress, Sr25519Keypair } from './keypair';
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

/**
 * btwallet writes a hotkey file in under 1 KB. A larger file is no hotkey file, and is refused
 * before it is read: a 3 GB one was read whole at start (65 s, 4.3 GB of memory) to be refused
 * then (an identity audit).
 */
const MAX_FILE_BYTES = 64 * 1024;

export function readWalletHotkey(path: string): Sr25519Keypair {
  return parseWalletHotkey(readHotkeyText(path), path);
}

/**
 * The file's text, read only when it is a regular file (through symlinks, as secret mounts are).
 * Opened without blocking and checked on the open descriptor: a FIFO named as the hotkey held
 * the start for ever, silent and deaf to SIGTERM (the read blocks the event loop, and the
 * signal's handler with it), until a SIGKILL (an identity audit).
 */
function readHotkeyText(path: string): string {
  let fd: number;
  try {
    fd = openSync(path, constants.O_RDONLY | constants.O_NONBLOCK);
  } catch (error) {
    const code = errorCode(error);
    throw new WalletFileError(
      code === 'ENOENT' ? `no hotkey file at ${path}` : `cannot read ${path} (${code})`,
    );
  }
  try {
    const stats = fstatSync(fd);
    if (!stats.isFile())
      throw new WalletFileError(`${path} is not a hotkey file: it is ${fileKind(stats)}`);
    if (stats.size > MAX_FILE_BYTES)
      throw new WalletFileError(
        `${path} is not a btwallet hotkey file: it is ${stats.size} bytes, where a hotkey file is under 1 KB`,
      );
    return readFileSync(fd, 'utf8');
  } catch (error) {
    if (error instanceof WalletFileError) throw error;
    throw new WalletFileError(`cannot read ${path} (${errorCode(error)})`);
  } finally {
    closeSync(fd);
  }
}

function fileKind(stats: Stats): string {
  if (stats.isDirectory()) return 'a directory';
  if (stats.isFIFO()) return 'a FIFO (named pipe)';
  if (stats.isSocket()) return 'a socket';
  if (stats.isCharacterDevice()) return 'a character device';
  if (stats.isBlockDevice()) return 'a block device';
  return 'not a regular file';
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
  // Some editors on Windows write one; btwallet does not read such a file either (serde_json).
  if (text.startsWith('\uFEFF'))
    throw new WalletFileError(
      `${where} is not a btwallet hotkey file: it starts with a byte order mark (UTF-8 BOM); save it without one`,
    );
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
  // Any SS58 prefix names the same key, as everywhere else in the service (canonicalAddress).
  const named = publicKeyOfAddress(ss58);
  if (!named)
    throw new WalletFileError(
      `${where}: ss58Address ${ss58} is not an address (SS58 with its checksum intact)`,
    );
  if (!u8aEq(named, keypair.publicKey)) {
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
