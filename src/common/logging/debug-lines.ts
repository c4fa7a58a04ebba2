import type { Logger as PinoRoot } from 'pino';

/** The logger whose level decides whether debug lines are written (LoggingModule's root). */
let levelSource: Pick<PinoRoot, 'isLevelEnabled'> | undefined;

/**
 * Called by LoggingModule with the root logger it made, which Nest's Logger writes through: the
 * level debugEnabled reads. The last app made wins, as it does for Nest's Logger itself.
 */
export function followLevelOf(root: Pick<PinoRoot, 'isLevelEnabled'>): void {
  levelSource = root;
}

/**
 * Whether debug lines are written (LOG_LEVEL debug or trace). Checked before a debug line's
 * fields are built: the miner calls' lines are many, and at info they must cost nothing. False
 * until a LoggingModule exists (unit tests that build a service alone).
 */
export function debugEnabled(): boolean {
  return levelSource?.isLevelEnabled('debug') ?? false;
}

/** A hotkey in a debug line: its first 8 characters, as in `5F3sa2TJ…` (enough to grep for). */
export function shortHotkey(hotkey: string): string {
  return hotkey.length > 8 ? `${hotkey.slice(0, 8)}…` : hotkey;
}
