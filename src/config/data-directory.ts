import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { StartupError } from '../common/lifecycle/startup-failure';
import { errorCode } from '../common/files/error-code';

/**
 * How long the check waits for DATA_DIR's file system: a healthy one, a network share included,
 * answers in milliseconds.
 */
const ANSWER_WITHIN_MS = 10_000;

/**
 * The probe, run by `node -e` with the datasets directory and the probe file as arguments: makes
 * the directory as `mkdir -p -m 750` does (the datasets folder for owner and group only:
 * datasets hold third parties' posts; the folders above it, DATA_DIR among them, as the umask
 * gives, since the embedded Postgres runs as another user and must pass through DATA_DIR to its
 * data), writes the file and removes it; a failure ends it with 1 and its reason on stderr. Not
 * Node's recursive mkdir: procfs answers ENOENT to a new directory in a directory that exists,
 * which that took for a missing parent and retried for ever, in C++ (the start hung, a core
 * busy). Here an ENOENT once the parent is made is final.
 */
const PROBE = `
const { mkdirSync, rmSync, writeFileSync } = require('node:fs');
const { dirname } = require('node:path');
function makeDirectory(path, parentMade, mode) {
  try {
    mkdirSync(path, mode);
  } catch (error) {
    if (error.code === 'EEXIST') return;
    const parent = dirname(path);
    if (error.code !== 'ENOENT' || parent === path) throw error;
    if (parentMade) {
      error.reason = 'ENOENT: ' + parent + ' takes no new directories: a pseudo file system such as /proc, or a broken link?';
      throw error;
    }
    makeDirectory(parent, false, 0o777);
    makeDirectory(path, true, mode);
  }
}
try {
  const [datasets, probe] = process.argv.slice(1);
  makeDirectory(datasets, false, 0o750);
  writeFileSync(probe, '');
  rmSync(probe);
} catch (error) {
  process.stderr.write(error.reason || error.code || error.message);
  process.exitCode = 1;
}
`;

/**
 * Checks at start that DATA_DIR can hold datasets: a scraping task is compiled there when it
 * ends, seven days after its vote. A DATA_DIR that was a file, or not writable, was found only
 * then: every task failed at its end, for good, while health said healthy (an operator audit).
 *
 * The probe runs in a child process, given `answerWithinMs`: a file system that never answers
 * (an unreachable network mount) holds a thread of Node's file pool in its system call, and
 * process.exit waits for that thread, so a time limit in this process would print the refusal
 * and never exit. The child is killed instead (docs/decisions.md, "Start-up").
 */
export async function checkDataDirectory(
  dataDir: string,
  answerWithinMs = ANSWER_WITHIN_MS,
): Promise<void> {
  const datasets = join(dataDir, 'datasets');
  const probe = join(datasets, `.write-check-${process.pid}`);
  const failure = await runProbe([datasets, probe], answerWithinMs);
  if (failure === undefined) return;
  throw new StartupError(
    `Startup failed: DATA_DIR=${dataDir}: cannot write datasets under it (${failure})`,
  );
}

/** The probe's reason for failing, or undefined when it succeeded. */
function runProbe(args: string[], answerWithinMs: number): Promise<string | undefined> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['-e', PROBE, ...args], {
      stdio: ['ignore', 'ignore', 'pipe'],
      windowsHide: true,
    });
    let reason = '';
    child.stderr.setEncoding('utf8').on('data', (text: string) => (reason += text));
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      // A child stuck in the kernel may outlive the kill: the start does not wait for it.
      child.stderr.destroy();
      child.unref();
      resolve(`no answer within ${answerWithinMs / 1000} s: an unreachable network mount?`);
    }, answerWithinMs);
    child.on('error', (error: NodeJS.ErrnoException) => {
      clearTimeout(timer);
      resolve(`the check could not run: ${errorCode(error)}`);
    });
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve(code === 0 ? undefined : reason.trim() || `the check ended with ${code}`);
    });
  });
}
