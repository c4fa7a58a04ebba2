import { inspect } from 'node:util';
import { bnToU8a, hexToU8a, isHex, stringToU8a, u8aToBn, u8aToHex } from '@polkadot/util';
import {
  cryptoWaitReady,
  decodeAddress,
  encodeAddress,
  keyExtractSuri,
  keyFromPath,
  mnemonicGenerate,
  mnemonicToMiniSecret,
  mnemonicValidate,
  sr25519PairFromSeed,
} from '@polkadot/util-crypto';
import { isReady, sr25519Sign, sr25519Verify } from '@polkadot/wasm-crypto';
import { getPublicKey } from '@scure/sr25519';

/**
 * sr25519 keys as Bittensor uses them. Keys are derived with @polkadot/util-crypto (and the public
 * key of a btwallet private key with @scure/sr25519, which util-crypto uses); signing and
 * verifying use @polkadot/wasm-crypto (schnorrkel, the Rust crate the chain runs, compiled to
 * WebAssembly), six to nine times faster than the pure-JS path: every miner call is signed, and
 * every devnet axon verifies.
 */

/** Bittensor addresses are generic Substrate ss58 (`5…`). */
export const SS58_FORMAT = 42;

/** Resolves once the WebAssembly crypto is loaded; sign and verify need it. */
export async function cryptoReady(): Promise<void> {
  await cryptoWaitReady();
}

export class KeyError extends Error {
  override readonly name = 'KeyError';
}

export class Sr25519Keypair {
  readonly address: string;
  readonly publicKey: Uint8Array;
  // A private field: not enumerable, not serialized, not shown by util.inspect.
  readonly #secretKey: Uint8Array;

  private constructor(pair: { publicKey: Uint8Array; secretKey: Uint8Array }) {
    this.publicKey = pair.publicKey;
    this.#secretKey = pair.secretKey;
    this.address = encodeAddress(pair.publicKey, SS58_FORMAT);
  }

  /** A 32-byte mini secret (btwallet's `secretSeed`). */
  static fromSeed(seed: Uint8Array): Sr25519Keypair {
    if (seed.length !== 32) throw new KeyError('a seed must be 32 bytes');
    return new Sr25519Keypair(sr25519PairFromSeed(seed));
  }

  /**
   * A secret URI: a mnemonic, a `0x` 32-byte seed, or either followed by derivation junctions
   * (`//hard`, `/soft`, `///password`); a URI starting with `/` derives from the development
   * phrase (`//Alice`), as Substrate tools do. Error messages never repeat the URI.
   */
  static fromUri(uri: string): Sr25519Keypair {
    let parts: ReturnType<typeof keyExtractSuri>;
    try {
      parts = keyExtractSuri(uri.startsWith('/') ? `${DEV_PHRASE}${uri}` : uri);
    } catch {
      throw new KeyError('not a mnemonic, a 0x seed or a derivation URI');
    }
    const { phrase, password, path } = parts;
    let seed: Uint8Array;
    if (isHex(phrase, 256)) seed = hexToU8a(phrase);
    else if (phrase === DEV_PHRASE && !password) seed = devSeed();
    else if (mnemonicValidate(phrase)) seed = mnemonicToMiniSecret(phrase, password);
    else throw new KeyError('the phrase is neither a valid mnemonic nor a 0x 32-byte seed');
    try {
      return new Sr25519Keypair(keyFromPath(sr25519PairFromSeed(seed), path, 'sr25519'));
    } catch {
      throw new KeyError('the derivation path cannot be applied');
    }
  }

  /**
   * A private key as btwallet writes it: 64 bytes, the key scalar in schnorrkel's canonical
   * form, then the nonce. util-crypto and wasm-crypto keep the scalar multiplied by the
   * cofactor 8 (the "ed25519 form"), so it is converted first.
   */
  static fromSchnorrkelSecret(privateKey: Uint8Array): Sr25519Keypair {
    if (privateKey.length !== 64) throw new KeyError('a private key must be 64 bytes');
    const scalar = u8aToBn(privateKey.subarray(0, 32), { isLe: true });
    const ed25519Form = bnToU8a(scalar.muln(8), { bitLength: 256, isLe: true });
    const secretKey = new Uint8Array(64);
    secretKey.set(ed25519Form, 0);
    secretKey.set(privateKey.subarray(32), 32);
    return new Sr25519Keypair({ publicKey: getPublicKey(secretKey), secretKey });
  }

  /** A fresh random key, with the mnemonic that restores it. */
  static generate(): { keypair: Sr25519Keypair; mnemonic: string } {
    const mnemonic = mnemonicGenerate(12);
    return { keypair: Sr25519Keypair.fromUri(mnemonic), mnemonic };
  }

  /** `0x` + 128 lower-case hex digits: the form dendrites send. */
  sign(message: string | Uint8Array): string {
    if (!isReady()) throw new KeyError('crypto not initialized: await cryptoReady() first');
    const bytes = typeof message === 'string' ? stringToU8a(message) : message;
    return u8aToHex(sr25519Sign(this.publicKey, this.#secretKey, bytes));
  }

  toJSON(): { address: string } {
    return { address: this.address };
  }

  [inspect.custom](): string {
    return `Sr25519Keypair(${this.address})`;
  }
}

/** The Substrate development phrase that `//Alice`-style URIs derive from. */
const DEV_PHRASE = 'bottom drive obey lake curtain smoke basket hold race lonely fit walk';
let devPhraseSeed: Uint8Array | undefined;

/** The development phrase's seed, computed once: the devnet derives all its keys from it. */
function devSeed(): Uint8Array {
  devPhraseSeed ??= mnemonicToMiniSecret(DEV_PHRASE);
  return devPhraseSeed;
}

const publicKeys = new Map<string, Uint8Array | null>();
/**
 * What a 32-byte key's address can be: SS58 (at most 50 base58 characters, with a two-byte
 * prefix) or its hex (`0x` and 64 digits). Anything else is refused before decoding: base58
 * decoding takes time growing with the square of the text, and a client's 16,000-character
 * `hotkey` held the event loop 2 s (every request waited), then stayed in the cache below (a
 * state audit: 10,000 such values held 130 MB).
 */
const ADDRESS_FORM = /^(?:[1-9A-HJ-NP-Za-km-z]{1,50}|0x[0-9a-fA-F]{64})$/;

/** The public key of an ss58 address, or null when it is not one (cached: addresses repeat). */
export function publicKeyOfAddress(address: string): Uint8Array | null {
  if (!ADDRESS_FORM.test(address)) return null;
  let key = publicKeys.get(address);
  if (key === undefined) {
    try {
      key = decodeAddress(address);
      if (key.length !== 32) key = null;
    } catch {
      key = null;
    }
    if (publicKeys.size > 10_000) publicKeys.clear();
    publicKeys.set(address, key);
  }
  return key;
}

/**
 * `address` in the chain's own form (SS58_FORMAT), or `address` itself when it is no address.
 * Another prefix, or the key's `0x` hex, names the same key (the chain reads any of them), but
 * files and rows keyed by hotkey use this form only.
 */
export function canonicalAddress(address: string): string {
  const publicKey = publicKeyOfAddress(address);
  return publicKey ? encodeAddress(publicKey, SS58_FORMAT) : address;
}

/** True when `signature` (`0x` hex) is `address`'s sr25519 signature of `message`; never throws. */
export function verifySignature(message: string, signature: string, address: string): boolean {
  const publicKey = publicKeyOfAddress(address);
  if (!publicKey || !/^0x[0-9a-fA-F]{128}$/.test(signature) || !isReady()) return false;
  try {
    return sr25519Verify(hexToU8a(signature), stringToU8a(message), publicKey);
  } catch {
    return false;
  }
}
