import { readdirSync, readFileSync } from 'node:fs';

// The embedded server's processes as this process sees them: signals, and /proc where it can be
// read.

/**
 * SIGKILL to the server `pid` (ours, still running: its pid is not reused), to its process group
 * (ours alone: spawned detached) and to its other child processes, which Postgres puts each in a
 * session of its own (a backend calls setsid), so that a frozen server's backends are not left
 * behind. The children first, while their parent lives and so their pids cannot be reused; they
 * are known by their parent's pid (none where /proc cannot be read). Returns how many there were
 * outside its group.
 */
export function killServer(pid: number): number {
  const others = childrenOutsideGroup(pid);
  for (const other of others) signal(other, 'SIGKILL');
  if (!signal(-pid, 'SIGKILL')) signal(pid, 'SIGKILL');
  return others.length;
}

function signal(pid: number, name: NodeJS.Signals): boolean {
  try {
    process.kill(pid, name);
    return true;
  } catch {
    return false;
  }
}

/** The fields of `/proc/<pid>/stat` after its command name (state, parent, group…). */
function statFields(pid: number | string): string[] | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(') ') + 2).split(' ');
  } catch {
    return undefined;
  }
}

/**
 * The pids whose parent is `pid` and whose process group is another; none where /proc cannot be
 * read. Parent and group come from one read of each process' stat: a child that exits between
 * two reads (the server's own short-lived children) was counted as outside the group.
 */
function childrenOutsideGroup(pid: number): number[] {
  return processIds().flatMap((entry) => {
    const fields = statFields(entry);
    return fields?.[1] === String(pid) && fields[2] !== String(pid) ? [Number(entry)] : [];
  });
}

/** Every process' entry in /proc (its pid, as /proc names it); none where it cannot be read. */
export function processIds(): string[] {
  try {
    return readdirSync('/proc').filter((entry) => /^\d+$/.test(entry));
  } catch {
    return [];
  }
}

/** Whether `pid` is a live process (one this process may signal). */
export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}
