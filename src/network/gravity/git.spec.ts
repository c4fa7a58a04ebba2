import { mkdtempSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gitSaid, redactGit, runGit } from './git';
import { processesLeft, runningProcesses } from '../../../test/support/processes';

describe(redactGit.name, () => {
  it('removes URL credentials and the given secrets', () => {
    expect(
      redactGit('fatal: could not read from https://user:s3cr3t-token@github.com/x/y', [
        's3cr3t-token',
      ]),
    ).toBe('fatal: could not read from https://[redacted]@github.com/x/y');
    expect(redactGit('Basic abc tok-123456', ['tok-123456'])).toBe('Basic abc [redacted]');
  });
});

describe(runGit.name, () => {
  it('reports git’s own message, without the credentials of a URL', async () => {
    // The cause, not git's advice that follows it.
    await expect(
      runGit(['ls-remote', 'file:///nonexistent/user:pw@repo'], { timeoutMs: 10_000 }),
    ).rejects.toThrow(/^git ls-remote: fatal: .*does not appear to be a git repository/);
    await expect(
      runGit(['-C', '/nonexistent-directory', 'status'], { timeoutMs: 10_000 }),
    ).rejects.toMatchObject({ exitCode: 128 });
  });
});

describe(gitSaid.name, () => {
  it('keeps the cause of a remote that could not be read, without git’s advice', () => {
    const ssh =
      'ssh: connect to host 127.0.0.1 port 4684: Connection refused\r\n' +
      'fatal: Could not read from remote repository.\n\n' +
      'Please make sure you have the correct access rights\nand the repository exists.\n';
    expect(gitSaid(ssh)).toBe(
      'ssh: connect to host 127.0.0.1 port 4684: Connection refused fatal: Could not read from remote repository.',
    );
  });

  it('keeps a refused push’s lines, without its hints', () => {
    const push =
      "To file:///srv/gravity.git\n ! [rejected]        main -> main (fetch first)\nerror: failed to push some refs to 'file:///srv/gravity.git'\n" +
      'hint: Updates were rejected because the remote contains work that you do not\nhint: have locally.\n';
    expect(gitSaid(push)).toBe(
      "To file:///srv/gravity.git ! [rejected]        main -> main (fetch first) error: failed to push some refs to 'file:///srv/gravity.git'",
    );
  });
});

describe('runGit’s timeout', () => {
  // git runs GIT_SSH_COMMAND through sh: a remote that never answers, made of two processes
  // (sh and sleep) that git does not end itself; the odd duration names them.
  it('ends git and every process it started, within the timeout and a grace period', async () => {
    const seconds = `29.${process.pid}${Date.now() % 1000}`;
    const started = Date.now();
    await expect(
      runGit(['ls-remote', 'ssh://127.0.0.1/gravity.git'], {
        timeoutMs: 300,
        env: { GIT_SSH_COMMAND: `sleep ${seconds}; false` },
      }),
    ).rejects.toThrow('git ls-remote: timed out after 300 ms');
    expect(Date.now() - started).toBeLessThan(5_000);
    await expect(processesLeft(`sleep ${seconds}`)).resolves.toEqual([]);
  });
});

describe('runGit’s bounds', () => {
  // A shell alias that ignores SIGTERM (and so does its sleep, which inherits that) holds git's
  // output open after git itself has ended: only the SIGKILL after the grace period ends it.
  it('kills what ignores SIGTERM once the grace period is over', async () => {
    const seconds = `27.${process.pid}${Date.now() % 1000}`;
    const started = Date.now();
    await expect(
      runGit(['stubborn'], {
        timeoutMs: 300,
        config: { 'alias.stubborn': `!trap '' TERM; sleep ${seconds}; false` },
      }),
    ).rejects.toThrow('git stubborn: timed out after 300 ms');
    expect(Date.now() - started).toBeGreaterThanOrEqual(2_000);
    expect(Date.now() - started).toBeLessThan(10_000);
    await expect(processesLeft(`sleep ${seconds}`)).resolves.toEqual([]);
  });

  // Every git call keeps at most maxOutputBytes of each stream (a file's bytes, a fetch's talk).
  it('ends git once its output passes maxOutputBytes', async () => {
    await expect(
      runGit(['hash-object', '--stdin'], { timeoutMs: 10_000, input: '[]', maxOutputBytes: 10 }),
    ).rejects.toMatchObject({
      message: 'git hash-object: stdout maxBuffer length exceeded',
      exitCode: undefined,
    });
  });
});

describe('runGit’s signal', () => {
  it('ends git and every process it started as soon as the signal is aborted', async () => {
    const seconds = `28.${process.pid}${Date.now() % 1000}`;
    const stopping = new AbortController();
    const started = Date.now();
    const fetching = runGit(['ls-remote', 'ssh://127.0.0.1/gravity.git'], {
      timeoutMs: 60_000,
      env: { GIT_SSH_COMMAND: `sleep ${seconds}; false` },
      signal: stopping.signal,
    });
    while (runningProcesses(`sleep ${seconds}`).length === 0 && Date.now() - started < 10_000)
      await new Promise((resolve) => setTimeout(resolve, 20));
    stopping.abort();
    await expect(fetching).rejects.toMatchObject({
      message: 'git ls-remote: aborted: the service is stopping',
      exitCode: undefined,
    });
    expect(Date.now() - started).toBeLessThan(10_000);
    await expect(processesLeft(`sleep ${seconds}`)).resolves.toEqual([]);
  });

  it('starts nothing once the signal is aborted', async () => {
    const stopping = new AbortController();
    stopping.abort();
    await expect(
      runGit(['hash-object', '--stdin'], { timeoutMs: 10_000, signal: stopping.signal }),
    ).rejects.toThrow('git hash-object: aborted: the service is stopping');
  });
});

describe('runGit’s environment', () => {
  afterEach(() => delete process.env.GIT_DIR);

  it('writes the input to git, and ignores a GIT_DIR the service was started with', async () => {
    process.env.GIT_DIR = '/nonexistent-repository';
    const blob = await runGit(['hash-object', '--stdin'], { timeoutMs: 10_000, input: '[]' });
    expect(blob.trim()).toBe('0637a088a01e8ddab3bf3fa98dbe804cbde1a0dc');
  });

  // With GIT_DIR inherited, `-C <clone>` would still read and write the repository it names.
  it('works in the repository it is pointed at with -C, whatever GIT_DIR the service was started with', async () => {
    const directory = realpathSync(mkdtempSync(join(tmpdir(), 'git-env-')));
    try {
      await runGit(['-C', directory, 'init', '--quiet', '--bare'], { timeoutMs: 10_000 });
      process.env.GIT_DIR = '/nonexistent-repository';
      const gitDir = await runGit(['-C', directory, 'rev-parse', '--absolute-git-dir'], {
        timeoutMs: 10_000,
      });
      expect(gitDir.trim()).toBe(directory);
    } finally {
      rmSync(directory, { recursive: true, force: true });
    }
  });
});
