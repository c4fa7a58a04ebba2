import { execFile } from 'node:child_process';

/** A git command failed; its message never holds a credential (see `redact`). */
export class GitError extends Error {
  override readonly name = 'GitError';

  constructor(
    message: string,
    /** git's own output (stderr, then stdout), redacted. */
    readonly output: string,
  ) {
    super(message);
  }
}

export interface GitRunOptions {
  /** Variables added to the command's environment (credentials, author, index file). */
  env?: Record<string, string>;
  /** Written to the command's standard input. */
  input?: string;
  timeoutMs: number;
  /** Values that must never appear in an error (a token, the header made of it). */
  secrets: readonly string[];
}

/**
 * Runs `git -C <dir> <args>` without a shell (execFile: no quoting, no injection) and without
 * touching this process's working directory, which the request handlers and every other job
 * share. Git never prompts (a missing credential is an error, not a hang) and reads no system
 * or global configuration, so that the operator's own git settings (hooks, signing, rewrites)
 * cannot change what is published. Resolves with stdout, trimmed.
 */
export function runGit(
  dir: string,
  args: readonly string[],
  options: GitRunOptions,
): Promise<string> {
  const env = {
    ...inherited(),
    GIT_TERMINAL_PROMPT: '0',
    GIT_CONFIG_NOSYSTEM: '1',
    GIT_CONFIG_GLOBAL: '/dev/null',
    GIT_ASKPASS: '',
    SSH_ASKPASS: '',
    // ssh:// remotes: never wait for a passphrase or a host-key question.
    GIT_SSH_COMMAND: process.env.GIT_SSH_COMMAND ?? 'ssh -o BatchMode=yes',
    LC_ALL: 'C',
    ...options.env,
  };
  return new Promise((resolve, reject) => {
    const child = execFile(
      'git',
      ['-C', dir, ...args],
      { env, timeout: options.timeoutMs, maxBuffer: 16 * 1024 * 1024, encoding: 'utf8' },
      (error, stdout, stderr) => {
        if (!error) return resolve(stdout.trim());
        const output = redact(`${stderr}\n${stdout}`.trim(), options.secrets);
        const reason = error.killed
          ? `timed out after ${options.timeoutMs} ms`
          : `exit ${String(error.code)}`;
        reject(new GitError(`git ${args[0]} failed (${reason}): ${lastLines(output)}`, output));
      },
    );
    child.stdin?.on('error', () => undefined);
    child.stdin?.end(options.input ?? '');
  });
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
  'GIT_CONFIG_COUNT',
]);

function inherited(): NodeJS.ProcessEnv {
  return Object.fromEntries(
    Object.entries(process.env).filter(
      ([name]) => !REPOSITORY_VARIABLES.has(name) && !/^GIT_CONFIG_(KEY|VALUE)_\d+$/.test(name),
    ),
  );
}

/** Replaces every secret in `text` with `***`. */
export function redact(text: string, secrets: readonly string[]): string {
  return secrets
    .filter((secret) => secret.length > 0)
    .reduce((redacted, secret) => redacted.split(secret).join('***'), text);
}

/** The end of git's output, where it says what went wrong, on one line. */
function lastLines(output: string): string {
  const lines = output.split('\n').filter((line) => line.trim() !== '');
  return lines.slice(-3).join(' | ').slice(0, 500);
}
