import { inspect } from 'node:util';
import { stringToU8a, u8aToHex, hexToU8a } from '@polkadot/util';
import * as utilCrypto from '@polkadot/util-crypto';
import { encodeAddress, mnemonicToMiniSecret, sr25519Verify } from '@polkadot/util-crypto';
import { loadVectors } from '../../../test/support/bittensor-fixtures';
import {
  canonicalAddress,
  cryptoReady,
  publicKeyOfAddress,
  Sr25519Keypair,
  SS58_FORMAT,
  verifySignature,
} from './keypair';

const vectors = loadVectors();

beforeAll(() => cryptoReady());

describe(Sr25519Keypair.name, () => {
  it('derives the development accounts and btwallet addresses from URIs', () => {
    const { btwallet, sr25519 } = vectors;
    expect(Sr25519Keypair.fromUri('//Alice').address).toBe(sr25519.dev_alice_ss58);
    expect(Sr25519Keypair.fromUri(`${sr25519.dev_phrase}//Alice`).address).toBe(
      sr25519.dev_alice_ss58,
    );
    expect(Sr25519Keypair.fromUri(btwallet.mnemonic).address).toBe(btwallet.ss58);
    expect(Sr25519Keypair.fromUri(`${btwallet.mnemonic}//Alice`).address).toBe(
      btwallet['hard_derived_//Alice_ss58'],
    );
    expect(Sr25519Keypair.fromUri(`${btwallet.mnemonic}/Alice`).address).toBe(
      btwallet['soft_derived_/Alice_ss58'],
    );
  });

  // `///password` is the BIP39 passphrase: the same words with another password are another key.
  it('derives with the password of a URI, the development phrase included', () => {
    const { btwallet, sr25519 } = vectors;
    const withPassword = Sr25519Keypair.fromUri(`${btwallet.mnemonic}///secret`);
    expect(withPassword.address).toBe(
      Sr25519Keypair.fromSeed(mnemonicToMiniSecret(btwallet.mnemonic, 'secret')).address,
    );
    expect(withPassword.address).not.toBe(btwallet.ss58);
    expect(Sr25519Keypair.fromUri('//Alice///secret').address).not.toBe(sr25519.dev_alice_ss58);
  });

  it('derives the Rust-checked public key of a seed, also given as a 0x URI', () => {
    const seed = stringToU8a('12345678901234567890123456789012');
    const expected = vectors.sr25519.seed_ascii_12345678901234567890123456789012_public_key;
    expect(u8aToHex(Sr25519Keypair.fromSeed(seed).publicKey)).toBe(expected);
    expect(u8aToHex(Sr25519Keypair.fromUri(u8aToHex(seed)).publicKey)).toBe(expected);
  });

  it("loads btwallet's canonical private key to its public key", () => {
    const {
      privateKey_schnorrkel_canonical: privateKey,
      public_key_of_that_privateKey: publicKey,
    } = vectors.btwallet;
    const keypair = Sr25519Keypair.fromSchnorrkelSecret(hexToU8a(privateKey));
    expect(u8aToHex(keypair.publicKey)).toBe(publicKey);
    const signature = keypair.sign('from a private key');
    expect(verifySignature('from a private key', signature, keypair.address)).toBe(true);
  });

  it('signs what an independent implementation verifies, and verifies what Rust signed', () => {
    const keypair = Sr25519Keypair.fromUri('//Gateway');
    const signature = keypair.sign('a message');
    expect(signature).toMatch(/^0x[0-9a-f]{128}$/);
    // util-crypto's sr25519Verify is the pure-JS @scure/sr25519, not the WebAssembly we sign with.
    expect(sr25519Verify(stringToU8a('a message'), hexToU8a(signature), keypair.publicKey)).toBe(
      true,
    );
    const rust = vectors.sr25519.rust_verified_signature;
    const address = encodeAddress(hexToU8a(rust.public_key), SS58_FORMAT);
    const rustSignature = u8aToHex(Uint8Array.from(rust.signature_bytes));
    expect(verifySignature(rust.message_utf8, rustSignature, address)).toBe(true);
    expect(verifySignature(`${rust.message_utf8} `, rustSignature, address)).toBe(false);
  });

  // btwallet's Keypair.sign, which a Python dendrite signs with, signs the bytes it is given at
  // any length (`pair.sign(&data)`): no blake2-256 hash above 256 bytes, which is the chain's
  // rule for extrinsic payloads (CommitmentSubmitter applies it), and no `<Bytes>` wrapper, which
  // polkadot-js extensions add. Lengths count UTF-8 bytes: the message starts with a 2-byte é.
  it.each([255, 256, 257, 1024])(
    'signs a %d-byte message as it is, neither hashed nor wrapped',
    (length) => {
      const keypair = Sr25519Keypair.fromUri('//Gateway');
      const message = `\u00e9${'a'.repeat(length - 2)}`;
      const bytes = stringToU8a(message);
      expect(bytes).toHaveLength(length);

      const signature = keypair.sign(message);

      expect(sr25519Verify(bytes, hexToU8a(signature), keypair.publicKey)).toBe(true);
      expect(verifySignature(message, signature, keypair.address)).toBe(true);
      // Given as bytes (CommitmentSubmitter's payloads), they are signed as they are too.
      const ofBytes = keypair.sign(bytes);
      expect(sr25519Verify(bytes, hexToU8a(ofBytes), keypair.publicKey)).toBe(true);
    },
  );

  it('refuses unusable URIs and seeds without repeating them', () => {
    const secret = 'correct horse battery staple';
    expect(() => Sr25519Keypair.fromUri(secret)).toThrow(/neither a valid mnemonic/);
    try {
      Sr25519Keypair.fromUri(secret);
    } catch (error) {
      expect((error as Error).message).not.toContain('horse');
    }
    expect(() => Sr25519Keypair.fromUri('')).toThrow();
    expect(() => Sr25519Keypair.fromSeed(new Uint8Array(31))).toThrow('32 bytes');
    expect(() => Sr25519Keypair.fromSchnorrkelSecret(new Uint8Array(32))).toThrow('64 bytes');
  });

  it('never shows its secret when serialized or inspected', () => {
    const { keypair, mnemonic } = Sr25519Keypair.generate();
    expect(Sr25519Keypair.fromUri(mnemonic).address).toBe(keypair.address);
    expect(JSON.stringify({ keypair })).toBe(`{"keypair":{"address":"${keypair.address}"}}`);
    expect(inspect(keypair)).toBe(`Sr25519Keypair(${keypair.address})`);
    expect(Object.keys(keypair).sort()).toEqual(['address', 'publicKey']);
  });
});

describe(canonicalAddress.name, () => {
  const alice = Sr25519Keypair.fromUri('//Alice');

  // The chain reads a key under any prefix; a Gravity file is named by its prefix-42 address.
  it('gives the prefix-42 address of a key written with another prefix or as hex', () => {
    for (const prefix of [0, 2, 42])
      expect(canonicalAddress(encodeAddress(alice.publicKey, prefix))).toBe(alice.address);
    expect(canonicalAddress(u8aToHex(alice.publicKey))).toBe(alice.address);
  });

  // Base58 decoding grows with the square of the text: 16,000 characters held the event loop
  // 2 s, each request (a state audit).
  it('refuses a text too long to be an address at once, without decoding it', () => {
    const decode = jest.spyOn(utilCrypto, 'decodeAddress');
    expect(publicKeyOfAddress('5'.repeat(16_000))).toBeNull();
    expect(publicKeyOfAddress(alice.address.padEnd(51, '1'))).toBeNull();
    expect(publicKeyOfAddress(`${u8aToHex(alice.publicKey)}00`)).toBeNull();
    expect(decode).not.toHaveBeenCalled();
    expect(publicKeyOfAddress(alice.address)).toEqual(alice.publicKey);
    expect(publicKeyOfAddress(u8aToHex(alice.publicKey))).toEqual(alice.publicKey);
    decode.mockRestore();
  });

  it('leaves a string that is no address as it is', () => {
    expect(canonicalAddress('abc')).toBe('abc');
    expect(canonicalAddress(`${alice.address.slice(0, -1)}x`)).toBe(
      `${alice.address.slice(0, -1)}x`,
    );
  });
});
