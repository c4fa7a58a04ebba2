import { createHash } from 'node:crypto';
import { basename, join } from 'node:path';

/** The most bytes a file name may have (Linux's NAME_MAX, and most other file systems'). */
const NAME_MAX = 255;

/**
 * The longest name written beside a dataset: the manifest's partial file (see atomic-file.ts),
 * 68 bytes after the dataset's own name. The Parquet file's and its partial's are shorter.
 */
const LONGEST_SUFFIX = `.jsonl.gz.manifest.json.${'0'.repeat(36)}.partial`;

/**
 * Where a task's dataset lives: `DATA_DIR/datasets/<name>.jsonl.gz`, its Parquet file and
 * manifest beside it. The name is the id percent-encoded, so that no id can leave the directory.
 * An id of 80 characters encodes to up to 960 bytes (`é` is 6, a CJK character 9, an emoji
 * 12), over the file system's 255: such an id's files are named by its digest
 * (`sha256=<hex>`) instead. `=` is percent-encoded in every id, so no id's own name is a digest
 * name. Ids whose names fit keep them, as every dataset compiled before was named so.
 *
 * Ids are case-sensitive (`Tao-X` and `tao-x` are two tasks) and file systems may not be (macOS'
 * and Windows' by default, SMB shares): an id with an upper-case letter gets its digest's first
 * 16 hex digits after its name (`Tao-X=<hex>`), so that no two ids' files are one file there.
 * Only ASCII letters need it: every other letter is percent-encoded, and the hex digits of an
 * escape are always upper case. Downloads read the file name the task recorded (datasetFileHere),
 * so files compiled before under the bare name are still served.
 */
export function datasetPath(dataDir: string, taskId: string): string {
  return join(datasetsDirectory(dataDir), `${datasetName(taskId)}.jsonl.gz`);
}

/**
 * Where this server reads a file a task recorded (`dataset_file`, `parquet_file`): its name,
 * under this server's `DATA_DIR/datasets`, whatever directory the task recorded. The name is
 * what the task recorded because names changed over releases (bare names, `=<hex>` suffixes,
 * digest names); the directory is the compiling replica's, which another replica may mount
 * elsewhere and a restore may move. Every reader of a task's files goes through it: downloads,
 * Parquet rewrites and their manifest, and the prune pass's check before items are deleted.
 */
export function datasetFileHere(dataDir: string, recorded: string): string {
  return join(datasetsDirectory(dataDir), basename(recorded));
}

/** The directory every task's files are written to. */
export function datasetsDirectory(dataDir: string): string {
  return join(dataDir, 'datasets');
}

function datasetName(taskId: string): string {
  const digest = createHash('sha256').update(taskId).digest('hex');
  const encoded =
    encodeURIComponent(taskId) + (/[A-Z]/.test(taskId) ? `=${digest.slice(0, 16)}` : '');
  if (encoded.length + LONGEST_SUFFIX.length <= NAME_MAX) return encoded;
  return `sha256=${digest}`;
}
