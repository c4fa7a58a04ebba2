import { ChildProcess, spawn } from 'node:child_process';

/** Git could not be run, or the remote could not be reached; the message has no credential. */
export class GitError extends Error {
  override readonly name = 'GitError';
  constructor(
    message: string,
    /**
     * git's exit code (128: fatal, e.g. unknown revision); undefined when it did not run to an end.
     */
    readonly exitCode: number | undefined,
    /** git's own output (stderr, then stdout), redacted: what callers match a refusal on. */
    readonly output = '',
  ) {
    super(message);
  }
}

export interface GitOptions {
  timeoutMs: number;
  /** Most bytes of standard output kept. */
  maxOutputBytes?: number;
  /**
   * Extra configuration for this call only, given through the environment (never argv, never a
   * file).
   */
  config?: Record<string, string>;
  /** Variables added to the command's environment (an index file, the author). */
  env?: Record<string, string>;
  /** Written to the command's standard input (`hash-object --stdin`). */
  input?: string;
  /** Removed from any message (a token, the header made of it). */
  secrets?: readonly (string | undefined)[];
  /** How the output is decoded: `latin1` keeps every byte as one character (a file's bytes). */
  encoding?: 'utf8' | 'latin1';
  /** Ends the command (and every process it started) when aborted: the service is stopping. */
  signal?: AbortSignal;
}

/**
 * Runs `git <args>` without a shell and without changing the working directory (callers pass
 * `-C <dir>`), which the request handlers and every other job share. Never prompts: a remote
 * that wants credentials it was not given fails. Reads no system or global configuration, so
 * the operator's own git settings (hooks, signing, URL rewrites) change nothing. Errors say
 * what git said, with URL credentials and the given secrets removed. Resolves with stdout as is.
 */
export function runGit(args: readonly string[], options: GitOptions): Promise<string> {
  const entries = Object.entries(options.config ?? {});
  const env: NodeJS.ProcessEnv = {
    ...inherited(),
    GIT_TERMINAL_PROMPT: '0',
    GIT_ASKPASS: 'echo',
    SSH_ASKPASS: '',
    GIT_CONFIG_NOSYSTEM: '1',
    GIT_CONFIG_GLOBAL: '/dev/null',
    LC_ALL: 'C',
    // BatchMode: ssh fails instead of asking for a passphrase or a host key confirmation.
    GIT_SSH_COMMAND: process.env.GIT_SSH_COMMAND ?? 'ssh -o BatchMode=yes',
    GIT_CONFIG_COUNT: String(entries.length),
    ...Object.fromEntries(
      entries.flatMap(([key, value], index) => [
        [`GIT_CONFIG_KEY_${index}`, key],
        [`GIT_CONFIG_VALUE_${index}`, value],
      ]),
    ),
    ...options.env,
  };
  const maxOutputBytes = options.maxOutputBytes ?? 1024 * 1024;
  const command = args[0] === '-C' ? args[2] : args[0];
  if (options.signal?.aborted)
    return Promise.reject(new GitError(`git ${command}: ${ABORTED}`, undefined));
  return new Promise((resolve, reject) => {
    // A process group of its own: git's children (ssh, the GIT_SSH_COMMAND shell, upload-pack)
    // are ended with it. Killed alone, git left them running, orphaned to the service's process.
    const child = spawn('git', args, { env, detached: true, windowsHide: true });
    const group = child.pid;
    if (group !== undefined) track(group);
    const stdout = new OutputBuffer();
    const stderr = new OutputBuffer();
    /** Why this call ended git before it exited: a timeout, too much output, or the signal. */
    let endedBecause: string | undefined;
    let killTimer: NodeJS.Timeout | undefined;
    const end = (reason: string) => {
      if (endedBecause !== undefined) return;
      endedBecause = reason;
      // SIGTERM first: git removes its lock files (refs/heads/<branch>.lock) on it.
      signalGroup(child, 'SIGTERM');
      killTimer = setTimeout(() => signalGroup(child, 'SIGKILL'), KILL_GRACE_MS);
    };
    const timer = setTimeout(
      () => end(`timed out after ${options.timeoutMs} ms`),
      options.timeoutMs,
    );
    const abort = () => end(ABORTED);
    options.signal?.addEventListener('abort', abort, { once: true });
    child.stdout.on('data', (chunk: Buffer) => {
      if (!stdout.add(chunk, maxOutputBytes)) end('stdout maxBuffer length exceeded');
    });
    child.stderr.on('data', (chunk: Buffer) => {
      if (!stderr.add(chunk, maxOutputBytes)) end('stderr maxBuffer length exceeded');
    });
    let settled = false;
    const fail = (what: string, exitCode: number | undefined) => {
      const encoding = options.encoding ?? 'utf8';
      const output = redactGit(
        `${stderr.text(encoding)}\n${stdout.text(encoding)}`.trim(),
        options.secrets,
      );
      reject(new GitError(redactGit(`git ${command}: ${what}`, options.secrets), exitCode, output));
    };
    const finish = (): boolean => {
      if (settled) return false;
      settled = true;
      clearTimeout(timer);
      clearTimeout(killTimer);
      options.signal?.removeEventListener('abort', abort);
      if (group !== undefined) untrack(group);
      return true;
    };
    // Git could not be started (not installed): 'close' may never come.
    child.on('error', (error) => {
      if (finish()) fail(error.message, undefined);
    });
    // Once git and every process holding its output have ended.
    child.on('close', (code) => {
      if (!finish()) return;
      if (endedBecause !== undefined) {
        // One that ignored SIGTERM and let go of the output would outlive the grace period.
        signalGroup(child, 'SIGKILL');
        return fail(endedBecause, undefined);
      }
      if (code === 0) return resolve(stdout.text(options.encoding ?? 'utf8'));
      fail(gitSaid(stderr.text('utf8')) || `exited with ${code ?? 'a signal'}`, code ?? undefined);
    });
    child.stdin.on('error', () => undefined);
    child.stdin.end(options.input ?? '');
  });
}

/**
 * What a failed git call said, in one line: its last three lines but for git's advice, which
 * is the same whatever went wrong. The last three alone were, for every ssh:// and file://
 * remote, "Please make sure you have the correct access rights and the repository exists.",
 * and the cause above it (`Permission denied (publickey)`, `Host key verification failed`, a
 * refused connection, a path that is no repository) was in no log line nor status (an audit's
 * finding).
 */
export function gitSaid(stderr: string): string {
  return stderr
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line !== '' && !GIT_ADVICE.some((advice) => advice.test(line)))
    .slice(-3)
    .join(' ');
}

/** Git's advice lines: after a remote could not be read, and the `hint:` lines of a push. */
const GIT_ADVICE = [
  /^Please make sure you have the correct access rights$/,
  /^and the repository exists\.$/,
  /^hint:/,
];

const ABORTED = 'aborted: the service is stopping';

/** How long the processes of a git call ended by SIGTERM get before SIGKILL. */
const KILL_GRACE_MS = 2_000;

/**
 * The process groups of the git calls running: killed if the service exits while one runs (a
 * second signal, a crash), which reaches them no longer through a process group of its own.
 */
const runningGroups = new Set<number>();

function killRunningGroups(): void {
  for (const group of runningGroups) signalGroupOf(group, 'SIGKILL');
}

function track(group: number): void {
  if (runningGroups.size === 0) process.on('exit', killRunningGroups);
  runningGroups.add(group);
}

function untrack(group: number): void {
  if (runningGroups.delete(group) && runningGroups.size === 0)
    process.removeListener('exit', killRunningGroups);
}

/** Sends `signal` to every process of the child's group (the child is its leader). */
function signalGroup(child: ChildProcess, signal: NodeJS.Signals): void {
  if (child.pid !== undefined) signalGroupOf(child.pid, signal);
}

function signalGroupOf(group: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-group, signal);
  } catch {
    // ESRCH: every process of the group has ended already.
  }
}

/** A stream's bytes, up to a limit. */
class OutputBuffer {
  private readonly chunks: Buffer[] = [];
  private bytes = 0;

  /** False once the limit is passed (the chunk is not kept). */
  add(chunk: Buffer, limit: number): boolean {
    this.bytes += chunk.length;
    if (this.bytes > limit) return false;
    this.chunks.push(chunk);
    return true;
  }

  text(encoding: 'utf8' | 'latin1'): string {
    return Buffer.concat(this.chunks).toString(encoding);
  }
}

/** A message about a git call as it may be shown: no `user:password@` in URLs, no secret. */
export function redactGit(text: string, secrets: readonly (string | undefined)[] = []): string {
  let redacted = text.replace(/(\w+:\/\/)[^/@\s]*@/g, '$1[redacted]@');
  for (const secret of secrets) if (secret) redacted = redacted.split(secret).join('[redacted]');
  return redacted;
}

/**
 * Variables that would point git at another repository, index or object store than `-C dir`:
 * dropped from the environment the service was started with (a shell with GIT_DIR exported).
 */
const REPOSITORY_VARIABLES = new Set([
  'GIT_DIR',
  'GIT_WORK_TREE',
  'GIT_INDEX_FILE',
  'GIT_OBJECT_DIRECTORY',
  'GIT_ALTERNATE_OBJECT_DIRECTORIES',
  'GIT_COMMON_DIR',
  'GIT_NAMESPACE',
  'GIT_CONFIG',
  'GIT_CONFIG_PARAMETERS',
]);

function inherited(): NodeJS.ProcessEnv {
  return Object.fromEntries(
    Object.entries(process.env).filter(
      ([name]) => !REPOSITORY_VARIABLES.has(name) && !/^GIT_CONFIG_(KEY|VALUE)_\d+$/.test(name),
    ),
  );
}
