import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { createFileOnce } from '../common/files/create-file-once';
import { StartupError } from '../common/lifecycle/startup-failure';
import { generateApiKey } from '../common/security/api-key-secret';
import { variableProblems } from './load-config';

export interface ResolvedMasterKey {
  key: string;
  /** Where a development key was read from or written to; undefined when MASTER_KEY is set. */
  file?: string;
  created: boolean;
}

/**
 * In development the master key may be left unset: one is generated on the first start,
 * kept in `<DATA_DIR>/master-key` (mode 0600) and reused afterwards, so restarts keep the key
 * the user already copied. Production refuses to start without MASTER_KEY (see load-config).
 * The file is the master key, so it is held to MASTER_KEY's rules (readKeyFile).
 */
export function resolveMasterKey(
  masterKey: string | undefined,
  dataDir: string,
): ResolvedMasterKey {
  if (masterKey) return { key: masterKey, created: false };
  const file = join(dataDir, 'master-key');
  if (existsSync(file)) return { key: readKeyFile(file), file, created: false };
  mkdirSync(dataDir, { recursive: true });
  const key = generateApiKey('sk_master_');
  if (createFileOnce(file, `${key}\n`, 0o600)) return { key, file, created: true };
  // Another process sharing the directory wrote its key first: that one is the key.
  return { key: readKeyFile(file), file, created: false };
}

/**
 * The key in an existing file, held to MASTER_KEY's rules; any problem stops the start in one
 * line naming the file (never quoting it: it may be an operator's key, which is why it is left
 * as it is rather than replaced). An operator review: an empty file failed deep in the app with
 * an internal error and a stack, `abc` was taken as the key, and a directory failed with EISDIR
 * and a stack, none naming the file. Line breaks and spaces at either end are not the key.
 */
function readKeyFile(file: string): string {
  let key: string;
  try {
    key = readFileSync(file, 'utf8').trim();
  } catch (error) {
    const reason = (error as NodeJS.ErrnoException).code ?? (error as Error).message;
    throw keyFileFailure(`cannot read the master key file ${file} (${reason})`);
  }
  if (key === '') throw keyFileFailure(`the master key file ${file} is empty`);
  const problems = variableProblems('MASTER_KEY', key);
  if (problems.length > 0) throw keyFileFailure(`the master key in ${file} ${problems.join('; ')}`);
  return key;
}

function keyFileFailure(problem: string): StartupError {
  return new StartupError(
    `Startup failed: ${problem} (it stands for MASTER_KEY, which is unset): correct it, delete ` +
      'it to have a new key generated at the next start, or set MASTER_KEY',
  );
}
