import { ChildProcess, spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import type { Socket } from 'node:net';
import { processIds } from './server-processes';

/**
 * Stops the server (SIGINT, a fast shutdown) when this process ends however it ends: `sh` reads
 * a pipe whose writing end only this process holds, and the kernel closes that end when the
 * process dies, SIGKILL included, which no `exit` listener survives. In a group of its own like
 * the server, so a terminal's Ctrl-C leaves it alone. It signals only a live postgres (the pid
 * may have been reused) and is killed once the server stops or is stopped by us. Without `sh`
 * (an error event) there is no keeper; the next start stops an orphan (removeStalePostmaster).
 */
export function startKeeper(pid: number): ChildProcess {
  const keeper = spawn('/bin/sh', ['-c', KEEPER_SCRIPT, KEEPER_NAME, String(pid)], {
    detached: true,
    stdio: ['pipe', 'ignore', 'ignore'],
    windowsHide: true,
  });
  keeper.once('error', () => undefined);
  // Neither the keeper nor its pipe keeps this process alive.
  keeper.unref();
  (keeper.stdin as Socket | null)?.unref();
  return keeper;
}

/** The keeper's `$0`, by which it is found (keepersOf). */
const KEEPER_NAME = 'postgres-keeper';

/** `read` returns at end of input: when this process is gone. */
const KEEPER_SCRIPT =
  'read -r _; if grep -q postgres "/proc/$1/cmdline" 2>/dev/null || [ ! -d /proc ]; then kill -INT "$1" 2>/dev/null; fi';

/**
 * The pids of the keepers of the server `pid` (startKeeper): one lives exactly as long as the
 * process that started the server. None where /proc cannot be read.
 */
export function keepersOf(pid: number): number[] {
  return processIds()
    .filter((entry) => {
      try {
        const args = readFileSync(`/proc/${entry}/cmdline`, 'utf8').split('\0');
        return args.includes(KEEPER_NAME) && args.includes(String(pid));
      } catch {
        // Gone between the listing and the read.
        return false;
      }
    })
    .map(Number);
}
