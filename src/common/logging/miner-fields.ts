import { shortHotkey } from './debug-lines';

/**
 * A miner's fields on a line about it, to filter its lines by (the text names it too): `uid`,
 * and `hotkey` as the debug lines write it, its first 8 characters, so that one filter finds
 * both kinds of line.
 */
export function minerFields(miner: { uid: number; hotkey: string }): {
  uid: number;
  hotkey: string;
} {
  return { uid: miner.uid, hotkey: shortHotkey(miner.hotkey) };
}
