import { readFile } from 'node:fs/promises';
import { basename } from 'node:path';
import { setAside } from './atomic-file';
import { parquetPathBeside } from './dataset-parquet';
import { DatasetManifest, manifestPathOf, sha256OnDisk, sizeOnDisk } from './dataset-writer';

/** A complete dataset set aside: its rows, as its manifest says, and the names it was kept as. */
export interface SetAsideDataset {
  rows: number | undefined;
  kept: string[];
}

/**
 * Sets aside (setAside) a complete dataset of task `taskId` found at `path`: its manifest names
 * the task, and the JSON lines file beside it has the manifest's size and SHA-256. Called by a
 * compile, under the task row's lock while the task is `compiling`, before it writes: such a
 * task records no dataset, so the one found is restored from a backup newer than the database,
 * or another deployment's on a shared DATA_DIR. The compile from the older items renamed over
 * it without a word, and its rows were lost (a restore audit: 695 rows replaced by 298).
 * Anything else there (a crashed attempt's files, a manifest that is no JSON) is left to be
 * written over, as before; undefined then.
 */
export async function setAsideCompleteDataset(
  taskId: string,
  path: string,
  now: Date,
): Promise<SetAsideDataset | undefined> {
  const manifestPath = manifestPathOf(path);
  let manifest: Partial<DatasetManifest> | undefined;
  try {
    manifest = JSON.parse(await readFile(manifestPath, 'utf8')) as Partial<DatasetManifest>;
  } catch {
    return undefined;
  }
  if (manifest?.task_id !== taskId || (await sizeOnDisk(path)) !== manifest.bytes) return undefined;
  if ((await sha256OnDisk(path)) !== manifest.sha256) return undefined;
  const kept: string[] = [];
  for (const file of [path, parquetPathBeside(path), manifestPath]) {
    const aside = await setAside(file, now);
    if (aside) kept.push(basename(aside));
  }
  return { rows: manifest.rows, kept };
}
