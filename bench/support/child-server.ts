import { ChildProcess, fork } from 'node:child_process';
import { createServer, Server } from 'node:http';

/** The one message a server child sends its parent: where it listens. */
interface ReadyMessage {
  port: number;
}

export interface ChildServer {
  child: ChildProcess;
  url: string;
  /** SIGTERM by pid, SIGKILL if still alive after a grace period; resolves once it exited. */
  stop(): Promise<void>;
}

/**
 * Forks `script` with `args` as a server child and waits until it reports its port over IPC.
 * Servers run in their own process so that the load generator in the parent does not share
 * (and skew) their event loop. The child's stdout goes to our stderr: stdout stays the report.
 * `nodeArgs` are options for node itself (e.g. `--cpu-prof`), after the parent's own.
 */
export function forkServer(
  script: string,
  args: string[],
  env: NodeJS.ProcessEnv,
  timeoutMs: number,
  nodeArgs: string[] = [],
): Promise<ChildServer> {
  const child = fork(script, args, {
    env,
    execArgv: [...process.execArgv, ...nodeArgs],
    stdio: ['ignore', 'pipe', 'inherit', 'ipc'],
  });
  child.stdout?.pipe(process.stderr);
  const server: ChildServer = { child, url: '', stop: () => stopChild(child) };
  return new Promise<ChildServer>((resolve, reject) => {
    const timer = setTimeout(() => fail(new Error(`no port within ${timeoutMs} ms`)), timeoutMs);
    const onExit = (code: number | null, signal: string | null): void =>
      fail(new Error(`exited before listening (code ${code}, signal ${signal})`));
    const onMessage = (message: unknown): void => {
      if (!isReady(message)) return;
      cleanup();
      resolve({ ...server, url: `http://127.0.0.1:${message.port}` });
    };
    function cleanup(): void {
      clearTimeout(timer);
      child.off('exit', onExit).off('message', onMessage);
    }
    function fail(error: Error): void {
      cleanup();
      // Stop it before rejecting, so that a caller's cleanup never meets a half-started child.
      void stopChild(child).finally(() => reject(new Error(`${args.join(' ')}: ${error.message}`)));
    }
    child.on('exit', onExit).on('message', onMessage);
  });
}

/** Child side: report the port of a listening server, and die with the parent. */
export function announcePort(server: Server): void {
  const address = server.address();
  if (typeof address !== 'object' || !address) {
    throw new Error('announcePort: server not listening');
  }
  announceReady(address.port);
}

/** Child side: report `port` (of a server started by other means), and die with the parent. */
export function announceReady(port: number): void {
  if (!process.send) throw new Error('announceReady: not an IPC child');
  // A parent killed without cleanup closes the IPC channel: exit rather than linger as orphan.
  process.once('disconnect', () => process.exit(0));
  const ready: ReadyMessage = { port };
  process.send(ready);
}

/** Environment for a `serveFixedResponse` child. */
export function fixedResponseEnv(body: string, contentType: string): NodeJS.ProcessEnv {
  return { ...process.env, BENCH_FIXED_BODY: body, BENCH_FIXED_CONTENT_TYPE: contentType };
}

/**
 * Child side: the floor a framework is compared with: bare node:http, no routing, auth or
 * middleware, answering every request with the same bytes and content type.
 */
export function serveFixedResponse(): void {
  const body = process.env.BENCH_FIXED_BODY ?? '';
  const headers = {
    'Content-Type': process.env.BENCH_FIXED_CONTENT_TYPE ?? 'application/json',
    'Content-Length': Buffer.byteLength(body),
  };
  const server = createServer((_request, response) => response.writeHead(200, headers).end(body));
  server.listen(0, '127.0.0.1', () => announcePort(server));
}

export async function stopChild(child: ChildProcess, graceMs = 5000): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null || child.pid === undefined) return;
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  try {
    process.kill(child.pid, 'SIGTERM');
  } catch {
    return; // ESRCH: it exited between the check and the kill.
  }
  const timer = setTimeout(() => child.pid !== undefined && child.kill('SIGKILL'), graceMs);
  await exited;
  clearTimeout(timer);
}

function isReady(message: unknown): message is ReadyMessage {
  return (
    typeof message === 'object' &&
    message !== null &&
    typeof (message as { port?: unknown }).port === 'number'
  );
}
