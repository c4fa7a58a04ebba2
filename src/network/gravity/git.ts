import { execFile } from 'node:child_process';

/** Git could not be run, or the remote could not be reached; the message has no credential. */
export class GitError extends Error {
  override readonly name = 'GitError';
  constructor(
    message: string,
    /** git's exit code (128: fatal, e.g. unknown revision); undefined when it did not run to an end. */
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
  /** Extra configuration for this call only, given through the environment (never argv, never a file). */
  config?: Record<string, string>;
  /** Variables added to the command's environment (an index file, the author). */
  env?: Record<string, string>;
  /** Written to the command's standard input (`hash-object --stdin`). */
  input?: string;
  /** Removed from any message (a token, the header made of it). */
  secrets?: readonly (string | undefined)[];
  /** How the output is decoded: `latin1` keeps every byte as one character (a file's bytes). */
  encoding?: 'utf8' | 'latin1';
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
  return new Promise((resolve, reject) => {
    const child = execFile(
      'git',
      args,
      {
        env,
        timeout: options.timeoutMs,
        maxBuffer: options.maxOutputBytes ?? 1024 * 1024,
        encoding: options.encoding ?? 'utf8',
        windowsHide: true,
      },
      (error, stdout, stderr) => {
        if (!error) return resolve(stdout);
        const code = typeof error.code === 'number' ? error.code : undefined;
        const output = redactGit(`${stderr}\n${stdout}`.trim(), options.secrets);
        const what = error.killed
          ? `timed out after ${options.timeoutMs} ms`
          : (stderr.trim() || error.message).split('\n').slice(-3).join(' ');
        const command = args[0] === '-C' ? args[2] : args[0];
        reject(new GitError(redactGit(`git ${command}: ${what}`, options.secrets), code, output));
      },
    );
    child.stdin?.on('error', () => undefined);
    child.stdin?.end(options.input ?? '');
  });
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
