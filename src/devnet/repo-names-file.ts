import { randomBytes } from 'node:crypto';
import { mkdir, rename, rm, writeFile } from 'node:fs/promises';
import { dirname, extname } from 'node:path';
import { loadWhenUsed } from '../common/load-when-used';
import { jsonLine } from '../common/text-lines';

/**
 * The devnet's validation results: one row per validated miner, in the shape of the original's
 * `hf_validation.parquet`. Deterministic, with what a real file holds: miners without a dataset
 * (`no_dataset_provided`), empty values, and repositories listed twice.
 */
export const SAMPLE_REPO_NAMES: readonly (string | null)[] = [
  'devnet-miner-3/x_dataset_3',
  'no_dataset_provided',
  'devnet-miner-1/reddit_dataset_1',
  'Devnet-Miner-7/x_dataset_7',
  'devnet-miner-1/reddit_dataset_1',
  null,
  'devnet-miner-2/x_dataset_2',
  'no_dataset_provided',
  '',
  'devnet_miner_5/reddit_dataset_5',
  'devnet-miner-3/x_dataset_3',
];

/**
 * The formats of the original's validation file that the gateway reads (HF_RESULTS_PATH). The
 * devnet writes them on its own, from the outside format, not from the gateway's reader:
 * src/modules/repos/repo-file-reader.spec.ts reads every format written here back.
 */
export type ValidationFileFormat = 'parquet' | 'csv' | 'jsonl';

function formatOf(path: string): ValidationFileFormat {
  const extension = extname(path).toLowerCase();
  if (extension === '.parquet' || extension === '.csv')
    return extension.slice(1) as 'parquet' | 'csv';
  return 'jsonl';
}

interface ValidationRow {
  uid: number;
  hotkey: string;
  repo_name: string | null;
}

/**
 * Writes `names` (default SAMPLE_REPO_NAMES) as a validation file with columns `uid`, `hotkey`
 * and `repo_name`, in the format of the file's extension (.parquet, .csv, else JSON lines)
 * unless `format` says otherwise. The file is replaced atomically (written beside it, then
 * renamed), as the service expects of every writer; its directory is created if needed.
 */
export async function writeSampleRepoNames(
  path: string,
  format: ValidationFileFormat = formatOf(path),
  names: readonly (string | null)[] = SAMPLE_REPO_NAMES,
): Promise<void> {
  const rows: ValidationRow[] = names.map((name, uid) => ({
    uid,
    hotkey: `devnet-hotkey-${uid}`,
    repo_name: name,
  }));
  await mkdir(dirname(path), { recursive: true });
  const temporary = `${path}.${randomBytes(6).toString('hex')}.tmp`;
  try {
    if (format === 'parquet') await writeParquet(temporary, rows);
    else await writeFile(temporary, format === 'csv' ? toCsv(rows) : toJsonLines(rows));
    await rename(temporary, path);
  } catch (error) {
    await rm(temporary, { force: true });
    throw error;
  }
}

async function writeParquet(path: string, rows: readonly ValidationRow[]): Promise<void> {
  const { ParquetSchema, ParquetWriter } =
    loadWhenUsed<typeof import('@dsnp/parquetjs')>('@dsnp/parquetjs');
  const schema = new ParquetSchema({
    uid: { type: 'INT32' },
    hotkey: { type: 'UTF8' },
    repo_name: { type: 'UTF8', optional: true, compression: 'SNAPPY' },
  });
  const writer = await ParquetWriter.openFile(schema, path);
  for (const row of rows) {
    await writer.appendRow(
      row.repo_name === null ? { uid: row.uid, hotkey: row.hotkey } : { ...row },
    );
  }
  await writer.close();
}

function toCsv(rows: readonly ValidationRow[]): string {
  const cell = (value: string | number | null) => {
    const text = value === null ? '' : String(value);
    return /[",\r\n]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
  };
  const lines = rows.map((row) => [row.uid, row.hotkey, row.repo_name].map(cell).join(','));
  return ['uid,hotkey,repo_name', ...lines].join('\n') + '\n';
}

function toJsonLines(rows: readonly ValidationRow[]): string {
  return rows.map((row) => jsonLine(row)).join('');
}
