import { until } from './until';

/**
 * What a spec file can leave behind that holds the process open, by the names Node gives its
 * resources (`process.getActiveResourcesInfo()`, which lists only those that hold the event loop:
 * an unref'd timer or socket is not there). Requests in flight (a file read, a DNS lookup) end by
 * themselves and are not counted.
 */
const HOLDERS: Readonly<Record<string, string>> = {
  Timeout: 'timer',
  TCPServerWrap: 'listening server',
  TCPSocketWrap: 'TCP connection',
  PipeServerWrap: 'listening pipe server',
  PipeWrap: 'pipe',
  ProcessWrap: 'child process',
  UDPWrap: 'UDP socket',
};

/** How many of each kind in HOLDERS hold this process open now. */
export function openHandles(): Map<string, number> {
  const counts = new Map<string, number>();
  for (const kind of process.getActiveResourcesInfo())
    if (kind in HOLDERS) counts.set(kind, (counts.get(kind) ?? 0) + 1);
  return counts;
}

/** What is open beyond `before`, as "2 timer(s)", one entry per kind; empty when nothing is. */
function beyond(before: Map<string, number>): string[] {
  return [...openHandles()]
    .map(([kind, count]) => [kind, count - (before.get(kind) ?? 0)] as const)
    .filter(([, more]) => more > 0)
    .map(([kind, more]) => `${more} ${HOLDERS[kind]}(s)`);
}

/**
 * Waits up to `timeoutMs` for the process to hold no more of each kind open than `before` did,
 * and answers what is still open beyond it then (empty once everything has ended).
 */
export async function handlesLeftAfter(
  before: Map<string, number>,
  timeoutMs: number,
): Promise<string[]> {
  return until(async () => (beyond(before).length === 0 ? [] : undefined), timeoutMs, 25).catch(
    () => beyond(before),
  );
}
