import { readdir, rm } from 'node:fs/promises';
import { basename, join } from 'node:path';
import { errorCode } from '../../common/files/error-code';
import { parquetPathBeside } from './dataset-parquet';
import { countRows, ErasedRow, failureOf } from './dataset-erasure';
import { datasetsDirectory } from './dataset-path';
import { manifestPathOf } from './dataset-writer';

/** What an erasure did, or would do, to one set-aside copy of a dataset (setAside). */
export type SetAsideErasureOutcome = {
  /** The JSON lines copy's name in DATA_DIR/datasets (the folder's path when it could not be read). */
  file: string;
} & (
  | { outcome: 'removed' | 'to-remove'; removed: number; files: string[] }
  | { outcome: 'not-checked'; why: string }
  /**
   * DATA_DIR/datasets does not exist: not checked, but not a place left unchecked either (a
   * service that never completed a task has no folder; a set-aside copy is only ever made beside
   * a dataset its task records, which the datasets' pass finds missing). Said as "0 holding"
   * before, for a command run with another DATA_DIR than the service's (a runbook audit).
   */
  | { outcome: 'no-folder' }
);

/**
 * A set-aside JSON lines copy's name: `<name>.jsonl.gz.replaced-<UTC second>-<random>`, or
 * without the random part, as releases of 2026-12-06 named them.
 */
const SET_ASIDE_JSONL = /^(.+)\.jsonl\.gz\.replaced-(\d{8}T\d{6}Z)(?:-[0-9a-f]{8})?$/;

/**
 * Removes every set-aside copy of a dataset (`….replaced-*`, complete-dataset.ts) whose JSON
 * lines copy holds a row `isErased` names, with the manifest and Parquet copies set aside with
 * it (the same second); with `dryRun`, only says which. Copies without such a row are read,
 * never written. Removed rather than rewritten: a copy is a dataset no task records, kept for an
 * operator to look at or put back by hand, and one rewritten would no longer be the file its
 * manifest copy describes, nor the one its Parquet copy was made from (docs/decisions.md,
 * "An author's erasure").
 */
export async function eraseFromSetAside(
  dataDir: string,
  isErased: ErasedRow,
  dryRun: boolean,
): Promise<SetAsideErasureOutcome[]> {
  const directory = datasetsDirectory(dataDir);
  let names: string[];
  try {
    names = (await readdir(directory)).sort();
  } catch (error) {
    // No folder, no copies, but said as such; one that cannot be read may hold some (a review:
    // said as none).
    if (errorCode(error) === 'ENOENT') return [{ file: directory, outcome: 'no-folder' }];
    return [
      {
        file: directory,
        outcome: 'not-checked',
        why: `it could not be read (${failureOf(error)})`,
      },
    ];
  }
  const outcomes: SetAsideErasureOutcome[] = [];
  for (const file of names) {
    const match = SET_ASIDE_JSONL.exec(file);
    if (!match) continue;
    const [, name, second] = match;
    let found: { erased: number };
    try {
      found = await countRows(join(directory, file), isErased);
    } catch (error) {
      outcomes.push({
        file,
        outcome: 'not-checked',
        why: `it could not be read (${failureOf(error)})`,
      });
      continue;
    }
    if (found.erased === 0) continue;
    const copies = setAsideWith(names, join(directory, `${name}.jsonl.gz`), second);
    const files = [file, ...copies];
    if (!dryRun) for (const copy of files) await rm(join(directory, copy), { force: true });
    outcomes.push({
      file,
      outcome: dryRun ? 'to-remove' : 'removed',
      removed: found.erased,
      files,
    });
  }
  return outcomes;
}

/** The manifest and Parquet copies of the dataset at `path` set aside in the same `second`. */
function setAsideWith(names: readonly string[], path: string, second: string): string[] {
  const prefixes = [manifestPathOf(path), parquetPathBeside(path)].map(
    (file) => `${basename(file)}.replaced-${second}`,
  );
  return names.filter((name) => prefixes.some((prefix) => name.startsWith(prefix)));
}
