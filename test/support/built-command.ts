import { ChildProcess, spawn } from 'node:child_process';
import { forEachLine } from '../../src/common/text-lines';
import { builtScript } from './app-process';
import { GUARDED_NODE_ARGS } from './loopback-guard';

/** What a command printed, line by line, and how it exited (its status, or its signal). */
export interface CommandExit {
  code: number | string;
  stdout: string[];
  stderr: string[];
}

/**
 * A script of the production build (`src/database/migrate-command.js`; buildService first) as an
 * operator runs it: a process of its own, its settings from `env` alone (and PATH), in `cwd` (a
 * directory without a `.env`). `started` is given the process and the lines so far, to signal it
 * at a moment the test chooses.
 */
export function runBuiltCommand(
  script: string,
  args: string[],
  env: Record<string, string>,
  cwd: string,
  started?: (child: ChildProcess, output: { stdout: string[]; stderr: string[] }) => void,
): Promise<CommandExit> {
  const child = spawn(process.execPath, [...GUARDED_NODE_ARGS, builtScript(script), ...args], {
    cwd,
    env: { PATH: process.env.PATH, MINER_ALLOWED_NETWORKS: '127.0.0.0/8', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const stdout: string[] = [];
  const stderr: string[] = [];
  forEachLine(child.stdout, (line) => stdout.push(line));
  forEachLine(child.stderr, (line) => stderr.push(line));
  started?.(child, { stdout, stderr });
  return new Promise((done) =>
    child.once('close', (code, signal) => done({ code: code ?? signal ?? -1, stdout, stderr })),
  );
}
