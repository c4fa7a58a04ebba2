import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { createFileOnce } from '../common/files/create-file-once';
import { generateApiKey } from '../common/security/api-key-secret';

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
 */
export function resolveMasterKey(
  masterKey: string | undefined,
  dataDir: string,
): ResolvedMasterKey {
  if (masterKey) return { key: masterKey, created: false };
  const file = join(dataDir, 'master-key');
  if (existsSync(file)) return { key: readFileSync(file, 'utf8').trim(), file, created: false };
  mkdirSync(dataDir, { recursive: true });
  const key = generateApiKey('sk_master_');
  if (createFileOnce(file, `${key}\n`, 0o600)) return { key, file, created: true };
  // Another process sharing the directory wrote its key first: that one is the key.
  return { key: readFileSync(file, 'utf8').trim(), file, created: false };
}
