import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { createWalletHotkey, readWalletHotkey } from '../network/bittensor/wallet-file';

/** Where the gateway finds the key: BT_WALLET_NAME=devnet, BT_WALLET_HOTKEY=gateway. */
export const GATEWAY_WALLET_NAME = 'devnet';
export const GATEWAY_WALLET_HOTKEY = 'gateway';

/**
 * A btwallet hotkey file for a gateway trying out the devnet in production mode (which reads
 * its key from a wallet file only): a public test key derived from the devnet's seed, like
 * `//Alice`, written under `directory` unless one is there already. Returns its address, which
 * the devnet lists as a validator so that its miners take the gateway's calls.
 */
export function writeGatewayWallet(directory: string, seed: number): string {
  const path = join(directory, GATEWAY_WALLET_NAME, 'hotkeys', GATEWAY_WALLET_HOTKEY);
  if (existsSync(path)) return readWalletHotkey(path).address;
  const secret = createHash('sha256').update(`devnet gateway ${seed}`).digest();
  return createWalletHotkey(path, { seed: secret }).keypair.address;
}
