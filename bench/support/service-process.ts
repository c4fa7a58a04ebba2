import { ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { forEachLine } from '../../src/common/text-lines';
import { freeListeningPort } from './ports';

export interface ServiceProcess {
  url: string;
  child: ChildProcess;
  /** Every line the process wrote to stdout and stderr so far. */
  lines: string[];
  /** SIGTERM, and the exit code once it exited. */
  stop(): Promise<number | null>;
}

export interface ServiceProcessOptions {
  /** A file descriptor for the service's stdout (its log), instead of collecting it in `lines`. */
  stdout?: number;
  /** Options for node itself, before the script (e.g. `--cpu-prof`). */
  nodeArgs?: string[];
}

/**
 * The compiled service (main.ts, which `npm run build:dev` compiled beside the benchmarks) as a
 * process of its own, exactly what a deployment runs, on a free loopback port; resolves once it
 * serves its document.
 */
export async function startServiceProcess(
  env: NodeJS.ProcessEnv,
  options: ServiceProcessOptions = {},
): Promise<ServiceProcess> {
  const port = await freeListeningPort();
  const main = join(__dirname, '..', '..', 'src', 'main.js');
  const child = spawn(process.execPath, [...(options.nodeArgs ?? []), main], {
    env: { ...env, HOST: '127.0.0.1', PORT: String(port) },
    stdio: ['ignore', options.stdout ?? 'pipe', 'pipe'],
  });
  const lines: string[] = [];
  for (const stream of [child.stdout, child.stderr])
    if (stream) forEachLine(stream, (line) => lines.push(line));
  const exited = once(child, 'exit') as Promise<[number | null]>;
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
    return (await exited)[0];
  };
  const url = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 60_000;
  for (;;) {
    if (child.exitCode !== null)
      throw new Error(`service exited with ${child.exitCode}:\n${lines.join('\n')}`);
    const answer = await fetch(`${url}/openapi.json`, { signal: AbortSignal.timeout(1000) }).catch(
      () => undefined,
    );
    if (answer?.ok) return { url, child, lines, stop };
    if (Date.now() > deadline) {
      await stop();
      throw new Error('service did not answer within 60 s');
    }
    await sleep(200);
  }
}
