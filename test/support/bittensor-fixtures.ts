import { existsSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';

/**
 * The shared Bittensor test data (`../shared/fixtures/bittensor/` beside the checkout), read in
 * place, never copied into the project. CI has it; a missing copy fails loudly, not silently.
 */
export const FIXTURES_DIRECTORY = resolve(__dirname, '../../../shared/fixtures/bittensor');

export function fixturePath(name: string): string {
  const path = join(FIXTURES_DIRECTORY, name);
  if (!existsSync(path))
    throw new Error(
      `Bittensor fixture ${name} not found at ${path}: check out shared/ beside the project`,
    );
  return path;
}

export interface BittensorVectors {
  dendrite_signatures: { headers: Record<string, string>; synapse_body_hash: string }[];
  sha3_256_of_empty_string: string;
  sr25519: {
    dev_phrase: string;
    dev_alice_ss58: string;
    seed_ascii_12345678901234567890123456789012_public_key: string;
    rust_verified_signature: {
      message_utf8: string;
      public_key: string;
      signature_bytes: number[];
    };
  };
  btwallet: {
    mnemonic: string;
    ss58: string;
    'hard_derived_//Alice_ss58': string;
    'soft_derived_/Alice_ss58': string;
    privateKey_schnorrkel_canonical: string;
    public_key_of_that_privateKey: string;
  };
}

export function loadVectors(): BittensorVectors {
  return JSON.parse(readFileSync(fixturePath('vectors.json'), 'utf8')) as BittensorVectors;
}
