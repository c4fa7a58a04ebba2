import { homedir } from 'node:os';
import { join } from 'node:path';
import { EnvironmentVariables } from './environment-variables';
import { parsed } from './variable-problems';

/**
 * Every setting that names a file or directory. A `~` at their start is the home directory, as a
 * shell would have it: dotenv and docker's env_file pass `DATA_DIR=~/gateway-data` as it is,
 * and it was expanded for BT_WALLET_PATH alone, so the others made a directory named `~` in
 * the working directory (the embedded Postgres, the master key and the datasets in it, and
 * off the replicas' shared path). load-config.spec.ts holds this list to the schema's names.
 */
export const PATH_VARIABLES = [
  'BT_WALLET_PATH',
  'DATA_DIR',
  'METAGRAPH_FILE',
  'HF_RESULTS_PATH',
  'DEFAULT_DESIRABILITIES_FILE',
] as const satisfies readonly (keyof EnvironmentVariables)[];

/**
 * `~` and `~/…` are the home directory of the user the process runs as. `~name/…` (another
 * user's home, in a shell) is refused rather than taken as a directory named `~name`: the
 * process does not look up other users, and the literal reading is the silent mistake above.
 */
export function expandHome(path: string): string {
  if (path === '~' || path.startsWith('~/')) return join(homeDirectory(), path.slice(1));
  if (path.startsWith('~'))
    throw new Error(
      "starts with ~name, another user's home, which is not expanded (only ~ and ~/ are): " +
        'write the absolute path, or ./~name for a directory of that name',
    );
  return path;
}

/**
 * The process user's home directory. Without `HOME` and without a user entry for the process's
 * uid (an arbitrary uid, as OpenShift runs an image), Node's own error named neither
 * (`uv_os_homedir returned ENOENT`; a restricted-runtime audit).
 */
function homeDirectory(): string {
  try {
    return homedir();
  } catch {
    throw new Error(
      `is under ~, the home directory, and the process has none: HOME is not set and uid ` +
        `${process.getuid?.() ?? '?'} has no user entry (an arbitrary uid, as OpenShift runs an ` +
        'image): write the absolute path',
    );
  }
}

/**
 * Every path setting with its `~` expanded, so that each reader of the config sees the same path.
 */
export function expandHomePaths(problems: string[], vars: EnvironmentVariables): void {
  for (const name of PATH_VARIABLES) {
    const path = vars[name];
    if (typeof path === 'string')
      vars[name] = parsed(problems, name, () => expandHome(path)) ?? path;
  }
}
