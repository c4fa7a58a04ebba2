import { readdirSync, readFileSync } from 'node:fs';

/**
 * Processes still running (not zombies) whose command line, its arguments joined by spaces,
 * holds `marker`: each as its pid and command line, for a failure to name them.
 */
export function runningProcesses(marker: string): string[] {
  return readdirSync('/proc')
    .filter((entry) => /^\d+$/.test(entry))
    .flatMap((pid) => {
      try {
        const command = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').join(' ');
        const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
        const state = stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3);
        return command.includes(marker) && state !== 'Z' ? [`${pid} ${command}`] : [];
      } catch {
        return []; // ended meanwhile
      }
    });
}

/**
 * The processes `runningProcesses(marker)` still lists once they have had `withinMs` to end: a
 * signal is delivered, and the process ends, a moment after it is sent (longer on a loaded
 * machine), so a list read at once can name processes already killed.
 */
export async function processesLeft(marker: string, withinMs = 2_000): Promise<string[]> {
  const deadline = Date.now() + withinMs;
  let left = runningProcesses(marker);
  while (left.length > 0 && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 20));
    left = runningProcesses(marker);
  }
  return left;
}
