import { readdirSync, readFileSync } from 'node:fs';

/** The pids of the processes keeping the server `pid` (src/database/postmaster.ts, startKeeper). */
export function keepersOf(pid: number): number[] {
  return readdirSync('/proc')
    .filter((entry) => /^\d+$/.test(entry))
    .filter((entry) => {
      try {
        const args = readFileSync(`/proc/${entry}/cmdline`, 'utf8').split('\0');
        return args.includes('postgres-keeper') && args.includes(String(pid));
      } catch {
        // Gone between the listing and the read.
        return false;
      }
    })
    .map(Number);
}
