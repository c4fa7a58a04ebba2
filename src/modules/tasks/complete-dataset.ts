import { readFile, rm } from 'node:fs/promises';
import { basename } from 'node:path';
import { Logger } from '@nestjs/common';
import { errorCode } from '../../common/files/error-code';
import { setAside } from './atomic-file';
import { parquetPathBeside } from './dataset-parquet';
import { DatasetManifest, manifestPathOf, sha256OnDisk, sizeOnDisk } from './dataset-writer';

/** A complete dataset set aside: what its manifest says of it, and where its files went. */
export interface SetAsideDataset {
  rows: number | undefined;
  sha256: string;
  /** The paths the files were moved to, the JSON lines file's first. */
  kept: string[];
}

/** A set-aside that stopped part way: `kept` were moved, the rest were not. */
export class SetAsideFailed extends Error {
  constructor(
    readonly kept: string[],
    override readonly cause: Error,
  ) {
    super(cause.message);
    this.name = 'SetAsideFailed';
  }
}

/**
 * Sets aside (setAside) a complete dataset of task `taskId` found at `path`: its manifest names
 * the task, and the JSON lines file beside it has the manifest's size and SHA-256. Called by a
 * compile, under the task row's lock while the task is `compiling`, before it writes: such a
 * task records no dataset, so the one found is an earlier attempt's that was never recorded,
 * one restored from a backup newer than the database, or another deployment's on a shared
 * DATA_DIR. The compile from older items renamed over it without a word, and its rows were lost
 * (a restore audit: 695 rows replaced by 298). Anything else there (a crashed attempt's files,
 * a manifest that is no JSON or gives no size and hash) is left to be written over, as before:
 * undefined then. The JSON lines file is moved first: a failure part way (SetAsideFailed) leaves
 * the manifest, so the next attempt finds no file it vouches for and writes over it.
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
  if (
    manifest?.task_id !== taskId ||
    typeof manifest.bytes !== 'number' ||
    typeof manifest.sha256 !== 'string' ||
    (await sizeOnDisk(path)) !== manifest.bytes ||
    (await sha256OnDisk(path)) !== manifest.sha256
  )
    return undefined;
  const kept: string[] = [];
  for (const file of [path, parquetPathBeside(path), manifestPath]) {
    try {
      const aside = await setAside(file, now);
      if (aside) kept.push(aside);
    } catch (error) {
      throw new SetAsideFailed(kept, error as Error);
    }
  }
  return { rows: manifest.rows, sha256: manifest.sha256, kept };
}

/**
 * setAsideCompleteDataset, said: an operator finds the files it moved by the line, those moved
 * before a failure part way too (the failure is the compile's, counted and tried again).
 */
export async function keepCompleteDataset(
  logger: Logger,
  taskId: string,
  path: string,
  now: Date,
): Promise<SetAsideDataset | undefined> {
  const said = (rows: number | undefined, kept: string[], rest = '') =>
    logger.warn(
      { task_id: taskId },
      `task ${taskId}: a complete dataset of it (${rows ?? 'unknown'} rows) was at ${path}, recorded ` +
        "by no task (an earlier attempt's not recorded, a backup restored newer than the database, " +
        `another deployment's): kept as ${kept.map((file) => basename(file)).join(', ') || 'nothing'}${rest}`,
    );
  try {
    const aside = await setAsideCompleteDataset(taskId, path, now);
    if (aside) said(aside.rows, aside.kept);
    return aside;
  } catch (error) {
    if (!(error instanceof SetAsideFailed)) throw error;
    said(undefined, error.kept, `; the rest could not be moved (${errorCode(error.cause)})`);
    throw error.cause;
  }
}

/**
 * Removes the files set aside once the compile's dataset turned out the very same bytes: an
 * earlier attempt's, or another replica's, not recorded (a review: such copies stayed for good
 * beside a warning that told the operator to put them back).
 */
export async function dropSameAside(
  logger: Logger,
  taskId: string,
  aside: SetAsideDataset,
): Promise<void> {
  for (const file of aside.kept) await rm(file, { force: true });
  logger.log(
    { task_id: taskId },
    `task ${taskId}: the dataset set aside before this compile held the same bytes: removed`,
  );
}
