import { Injectable, Logger } from '@nestjs/common';
import { parquetPathBeside, writeParquet } from './dataset-parquet';
import { CompiledDataset, JsonLinesFile, ParquetFile, writeManifest } from './dataset-writer';
import { CompletedTask, TaskRow } from './task.types';
import { TasksRepository } from './tasks.repository';

/**
 * The Parquet file of a completed task. Compiling writes it beside the JSON lines file; a task
 * completed before that (or whose Parquet write failed) gets it at its first Parquet download,
 * converted from its JSON lines file and then kept: see docs/decisions.md ("Scraping task
 * lifecycle").
 */
@Injectable()
export class DatasetParquetService {
  private readonly logger = new Logger(DatasetParquetService.name);
  /** Conversions in progress here, by task id: concurrent downloads share one. */
  private readonly converting = new Map<string, Promise<ParquetFile>>();

  constructor(private readonly repository: TasksRepository) {}

  /** Writes the Parquet file of a dataset being compiled; null (logged) when that fails. */
  async tryWrite(task: TaskRow, jsonl: JsonLinesFile): Promise<ParquetFile | null> {
    try {
      return await this.write(task, jsonl.file, jsonl.rows);
    } catch (error) {
      this.logger.error(
        `task ${task.id}: Parquet file not written (written at its first Parquet download): ${(error as Error).message}`,
      );
      return null;
    }
  }

  /** The Parquet file of a completed task, written now if it has none yet. */
  ensure(task: CompletedTask): Promise<ParquetFile> {
    if (task.parquet_file && task.parquet_sha256)
      return Promise.resolve({
        file: task.parquet_file,
        bytes: Number(task.parquet_bytes),
        sha256: task.parquet_sha256,
      });
    let converting = this.converting.get(task.id);
    if (!converting) {
      converting = this.convert(task).finally(() => this.converting.delete(task.id));
      this.converting.set(task.id, converting);
    }
    return converting;
  }

  private async convert(task: CompletedTask): Promise<ParquetFile> {
    const parquet = await this.write(task, task.dataset_file, task.dataset_rows ?? 0);
    await this.repository.recordParquet(task.id, parquet);
    await writeManifest(task.id, compiledDatasetOf(task, parquet), task.completed_at ?? new Date());
    this.logger.log(`task ${task.id}: Parquet file written on first download`);
    return parquet;
  }

  private async write(task: TaskRow, jsonlPath: string, rows: number): Promise<ParquetFile> {
    const file = parquetPathBeside(jsonlPath);
    const written = await writeParquet(task.platform, jsonlPath, file);
    // Cannot differ (one file is made from the other); checked because a download trusts it.
    if (written.rows !== rows)
      throw new Error(`the Parquet file has ${written.rows} rows, the JSON lines file ${rows}`);
    return { file, bytes: written.bytes, sha256: written.sha256 };
  }
}

function compiledDatasetOf(task: CompletedTask, parquet: ParquetFile): CompiledDataset {
  return {
    file: task.dataset_file,
    rows: task.dataset_rows ?? 0,
    bytes: Number(task.dataset_bytes ?? 0),
    sha256: task.dataset_sha256,
    start: task.data_start,
    end: task.data_end,
    parquet,
  };
}
