import { rm, stat } from 'node:fs/promises';
import { basename } from 'node:path';
import { Logger } from '@nestjs/common';
import { errorCode } from '../../common/files/error-code';
import { setAside } from './atomic-file';
import { parquetPathBeside } from './dataset-parquet';
import { howFileDiffers, manifestPathOf, readManifest } from './dataset-writer';
import { fileStateOf } from './verified-files';

/** A complete dataset found at a task's path: what its manifest says, and which file it is. */
export interface VouchedDataset {
  rows: number | undefined;
  bytes: number;
  sha256: string;
  /** The recorded file an erasure's rewrite replaced (the manifest's `replaces_sha256`). */
  replacesSha256: string | undefined;
  /** The JSON lines file's state when it was hashed (fileStateOf). */
  identity: string;
}

/** A complete dataset set aside: what its manifest said of it, and where its files went. */
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
 * The state of the file at `path` (fileStateOf), or undefined when there is none: what a step
 * under the task row's lock compares, to find the file it read still in place (a compile's
 * set-aside, an author's erasure).
 */
export function stateAt(path: string): Promise<string | undefined> {
  return stat(path).then(fileStateOf, () => undefined);
}

/**
 * A complete dataset of task `taskId` at `path`, or undefined: its manifest names the task, and
 * the JSON lines file beside it has the manifest's size and SHA-256. Read outside the task row's
 * lock: hashing a large file inside its transaction outran the session's idle timeout, and held
 * every other user of the row (a review). Anything else there (a crashed attempt's files, a
 * manifest that is no JSON or gives no size and hash) vouches for nothing: written over.
 */
export async function vouchedDataset(
  taskId: string,
  path: string,
): Promise<VouchedDataset | undefined> {
  const manifest = await readManifest(path);
  const identity = await stateAt(path);
  if (
    identity === undefined ||
    manifest?.task_id !== taskId ||
    typeof manifest.bytes !== 'number' ||
    typeof manifest.sha256 !== 'string' ||
    (await howFileDiffers(path, { bytes: manifest.bytes, sha256: manifest.sha256 })) !==
      undefined ||
    (await stateAt(path)) !== identity
  )
    return undefined;
  return {
    rows: manifest.rows,
    bytes: manifest.bytes,
    sha256: manifest.sha256,
    replacesSha256: manifest.replaces_sha256,
    identity,
  };
}

/**
 * Sets aside (setAside) the dataset `vouched` for at `path`, unless another file has taken its
 * place since it was read. Called by a compile under the task row's lock while the task is
 * `compiling`, before it writes: such a task records no dataset, so the one found is an earlier
 * attempt's that was never recorded, one restored from a backup newer than the database, or
 * another deployment's on a shared DATA_DIR. The compile from older items renamed over it
 * without a word, and its rows were lost (a restore audit: 695 rows replaced by 298). The
 * JSON lines file is moved first: a failure part way (SetAsideFailed) keeps the rows, whose
 * size and hash the file itself gives again; the Parquet file, made from it, goes last.
 */
export async function setAsideVouched(
  vouched: VouchedDataset,
  path: string,
  now: Date,
): Promise<SetAsideDataset | undefined> {
  if ((await stateAt(path)) !== vouched.identity) return undefined;
  const kept: string[] = [];
  for (const file of [path, manifestPathOf(path), parquetPathBeside(path)]) {
    try {
      const aside = await setAside(file, now);
      if (aside) kept.push(aside);
    } catch (error) {
      throw new SetAsideFailed(kept, error as Error);
    }
  }
  return { rows: vouched.rows, sha256: vouched.sha256, kept };
}

/**
 * setAsideVouched, said: an operator finds the files it moved by the line, those moved before
 * a failure part way too (the failure is the compile's, counted and tried again).
 */
export async function keepCompleteDataset(
  logger: Logger,
  taskId: string,
  path: string,
  vouched: VouchedDataset,
  now: Date,
): Promise<SetAsideDataset | undefined> {
  const said = (kept: string[], rest = '') =>
    logger.warn(
      { task_id: taskId },
      `task ${taskId}: a complete dataset of it (${vouched.rows ?? 'unknown'} rows) was at ${path}, recorded ` +
        "by no task (an earlier attempt's not recorded, a backup restored newer than the database, " +
        `another deployment's): kept as ${kept.map((file) => basename(file)).join(', ') || 'nothing'}${rest}`,
    );
  try {
    const aside = await setAsideVouched(vouched, path, now);
    if (aside) said(aside.kept);
    return aside;
  } catch (error) {
    if (!(error instanceof SetAsideFailed)) throw error;
    said(error.kept, `; the rest could not be moved (${errorCode(error.cause)})`);
    throw error.cause;
  }
}

/**
 * Removes the files set aside once the compile's dataset turned out the very same bytes: an
 * earlier attempt's, or another replica's, not recorded (a review: such copies stayed for good
 * beside a warning that told the operator to put them back). A failure to remove is said, not
 * the compile's: the task is completed by then.
 */
export async function dropSameAside(
  logger: Logger,
  taskId: string,
  aside: SetAsideDataset,
): Promise<void> {
  try {
    for (const file of aside.kept) await rm(file, { force: true });
  } catch (error) {
    logger.warn(
      { task_id: taskId },
      `task ${taskId}: the dataset set aside before this compile held the same bytes, and could not be removed (${errorCode(error)})`,
    );
    return;
  }
  logger.log(
    { task_id: taskId },
    `task ${taskId}: the dataset set aside before this compile held the same bytes: removed`,
  );
}
