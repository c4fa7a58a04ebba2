import { Injectable, Logger, OnModuleDestroy } from '@nestjs/common';
import { bulkhead, isBulkheadRejectedError } from 'cockatiel';
import { Clock } from '../../common/clock/clock';
import { SingleFlight } from '../../common/single-flight';
import { AppConfig } from '../../config/app-config';
import { InjectConfig } from '../../config/config.module';
import { RenameRefused, RenameWith, WriteStopped } from './atomic-file';
import { stateAt } from './complete-dataset';
import {
  hasCurrentParquet,
  parquetMetadata,
  parquetPathBeside,
  writeParquet,
} from './dataset-parquet';
import { datasetFileHere } from './dataset-path';
import {
  CompiledDataset,
  JsonLinesFile,
  ParquetFile,
  RecordedParquetFile,
  sizeOnDisk,
  writeManifest,
} from './dataset-writer';
import { CompletedTask, TaskRow } from './task.types';
import { TaskLifecycleRepository } from './task-lifecycle.repository';

/**
 * How long a failed Parquet conversion stands: until then a download is answered that the file
 * could not be written, without converting again (a conversion reads the whole dataset).
 */
export const PARQUET_RETRY_MS = 60 * 60_000;

/**
 * Conversions at a download that run at once in the process, whatever the tasks: each reads a
 * whole JSON lines file on the event loop and holds a row group in memory. Those past it wait
 * in a queue of PARQUET_CONVERSION_QUEUE, and past that are refused (ParquetBusyError: a 503
 * with Retry-After). See docs/decisions.md ("Scraping task lifecycle").
 */
export const PARQUET_CONVERSIONS = 2;
/** Conversions waiting for one of the PARQUET_CONVERSIONS to end. */
export const PARQUET_CONVERSION_QUEUE = 4;

/** A compile's Parquet write: when it is given up (WriteStopped), how it renames (RenameWith). */
export interface ParquetWriteOptions {
  stopping?: () => boolean;
  renameWith?: RenameWith;
}

/** Every conversion slot and queue place is taken: the download is to be tried again later. */
export class ParquetBusyError extends Error {
  constructor(readonly taskId: string) {
    super(`task ${taskId}: too many Parquet conversions in progress`);
  }
}

/**
 * The Parquet file of a completed task. Compiling writes it beside the JSON lines file; a task
 * completed before that (or whose Parquet write failed) gets it at its first Parquet download,
 * converted from its JSON lines file and then kept: see docs/decisions.md ("Scraping task
 * lifecycle").
 */
@Injectable()
export class DatasetParquetService implements OnModuleDestroy {
  private readonly logger = new Logger(DatasetParquetService.name);
  /** Conversions in progress here, by task id: concurrent downloads share one. */
  private readonly converting = new SingleFlight<string, RecordedParquetFile | null>();
  /** When a conversion last failed here (ms), by task id; kept PARQUET_RETRY_MS. */
  private readonly failedAt = new Map<string, number>();
  /** Bounds conversions at a download in the process (cockatiel's, as miner calls are). */
  private readonly conversions = bulkhead(PARQUET_CONVERSIONS, PARQUET_CONVERSION_QUEUE);
  /** Set at shutdown: every write under way is given up, its worker thread terminated. */
  private stopping = false;

  constructor(
    private readonly repository: TaskLifecycleRepository,
    private readonly clock: Clock,
    @InjectConfig() private readonly config: AppConfig,
  ) {}

  /**
   * Gives up the writes under way (WriteStopped), a download's conversion as a compile's: a
   * worker thread converting a large dataset would otherwise hold the process for its seconds.
   */
  onModuleDestroy(): void {
    this.stopping = true;
  }

  /**
   * Writes the Parquet file of a dataset being compiled; null (logged) when that fails. Throws
   * WriteStopped once `stopping` says so: the compile is given up, not completed without it.
   * `renameWith` runs its rename into place (writeFileAtomically); its RenameRefused is thrown
   * too, the compile's to handle, not the file's failure.
   */
  async tryWrite(
    task: TaskRow,
    jsonl: JsonLinesFile,
    options: ParquetWriteOptions = {},
  ): Promise<ParquetFile | null> {
    try {
      return await this.write(task, jsonl, options);
    } catch (error) {
      if (error instanceof WriteStopped || error instanceof RenameRefused) throw error;
      this.recordFailure(task.id, error as Error);
      return null;
    }
  }

  /**
   * The Parquet file of a completed task, written now if it has none yet, or one an earlier
   * writer made (`parquet_version`), or if its file is gone from the disk or is not the size
   * recorded (the JSON lines file it is made from is there: the caller checked); null when it
   * cannot be written: the conversion failed now or within PARQUET_RETRY_MS. Throws
   * ParquetBusyError when PARQUET_CONVERSIONS run and PARQUET_CONVERSION_QUEUE wait already
   * (a download of a task already converting shares its conversion, busy or not). With the file,
   * when it was written: `parquet_written_at`, or `completed_at` when a release before that
   * column recorded it (docs/decisions.md, "Scraping task lifecycle"). Both files are read, and
   * a Parquet file written, by their names under this server's DATA_DIR (datasetFileHere).
   */
  async ensure(recordedTask: CompletedTask): Promise<RecordedParquetFile | null> {
    const task = this.filesHere(recordedTask);
    let why = 'it had none';
    if (hasCurrentParquet(task)) {
      const recorded = {
        file: task.parquet_file,
        bytes: Number(task.parquet_bytes),
        sha256: task.parquet_sha256,
        writtenAt: task.parquet_written_at ?? task.completed_at,
      };
      const size = await sizeOnDisk(recorded.file);
      if (size === recorded.bytes) return recorded;
      why =
        size === undefined
          ? 'its file was missing on disk'
          : `its file on disk had ${size} bytes, not the ${recorded.bytes} recorded`;
    } else if (task.parquet_file) {
      why = 'an earlier writer had made its file';
    }
    const failedAt = this.failedAt.get(task.id);
    if (failedAt !== undefined && this.clock.now().getTime() - failedAt < PARQUET_RETRY_MS)
      return null;
    return this.converting.run(task.id, () =>
      this.conversions
        .execute(() => this.convert(task, why))
        .catch((error: unknown) => {
          if (isBulkheadRejectedError(error)) throw new ParquetBusyError(task.id);
          throw error;
        }),
    );
  }

  /**
   * `why`: what the log line gives as the reason for writing it at a download. The manifest is
   * part of the write (as at a compile): a full disk failing it is the Parquet file not written
   * (503 parquetNotWritten), not a 500. It is written before the file is recorded, so a
   * recording that fails (the database unavailable: 503, by the exception filter) leaves the
   * task without a recorded Parquet file, and the next download writes it again.
   */
  private async convert(task: CompletedTask, why: string): Promise<RecordedParquetFile | null> {
    let parquet: ParquetFile;
    // The JSON lines file as the conversion found it, before reading it (renameWhileCompleted).
    const converted = await stateAt(task.dataset_file);
    const renameWith = this.renameWhileCompleted(task, converted);
    try {
      parquet = await this.write(
        task,
        { file: task.dataset_file, rows: task.dataset_rows ?? 0, sha256: task.dataset_sha256 },
        { renameWith },
      );
      await writeManifest(
        task,
        compiledDatasetOf(task, parquet),
        task.completed_at ?? new Date(),
        renameWith,
      );
    } catch (error) {
      // Not the file's failure: the service is stopping, and the next process may convert.
      if (error instanceof WriteStopped) {
        this.logger.log({ task_id: task.id }, `task ${task.id}: Parquet file given up at shutdown`);
        return null;
      }
      // Nor when the dataset was rewritten (an author's erasure) or the task left `completed`
      // meanwhile (renameWhileCompleted): not remembered as a failure, the next download
      // converts the file the task records then.
      if (error instanceof RenameRefused) {
        this.logger.log(
          { task_id: task.id },
          `task ${task.id}: Parquet file given up: ${error.message}`,
        );
        return null;
      }
      this.recordFailure(task.id, error as Error);
      return null;
    }
    this.failedAt.delete(task.id);
    const writtenAt = await this.repository.recordParquet(
      task.id,
      parquet,
      this.clock.now(),
      task.dataset_sha256,
    );
    this.logger.log(
      { task_id: task.id },
      `task ${task.id}: Parquet file written at a download (${why})`,
    );
    return { ...parquet, writtenAt };
  }

  /**
   * A conversion's renames into place, each under the task row's lock (lockTask), as a compile's
   * are: a compile giving up removes its own stray files under it (identity checked, then
   * removed), and a conversion's file renamed between the two was removed though the task then
   * recorded it (docs/decisions.md, "The task row's lock for a compile's renames, completion and
   * removals"). Refused unless the task is `completed`, the only state a conversion is for, and
   * still records the JSON lines file the conversion read: an author's erasure rewrites it under
   * the same lock, and a Parquet file of the old rows renamed after it would bring them back.
   * Refused too when another file has taken the JSON lines file's place since the conversion
   * began (`converted`, its fileStateOf): an erasure whose commit was lost after its rename
   * leaves the old record with the new file, and the conversion's manifest, written over the
   * erasure's, took away what lets the next run finish it (a review).
   */
  private renameWhileCompleted(task: CompletedTask, converted: string | undefined): RenameWith {
    return (rename) =>
      this.repository.lockTask(task.id, async (lock) => {
        if (lock.state !== 'completed')
          throw new RenameRefused(`the task is ${lock.state ?? 'gone'}, not completed`);
        if (lock.datasetSha256 !== task.dataset_sha256)
          throw new RenameRefused('the dataset was rewritten meanwhile');
        if ((await stateAt(task.dataset_file)) !== converted)
          throw new RenameRefused('the dataset file was replaced meanwhile');
        await rename();
      });
  }

  /** The task with the files it records as this server reads them (datasetFileHere). */
  private filesHere(task: CompletedTask): CompletedTask {
    const { dataDir } = this.config;
    return {
      ...task,
      dataset_file: datasetFileHere(dataDir, task.dataset_file),
      parquet_file: task.parquet_file && datasetFileHere(dataDir, task.parquet_file),
    };
  }

  /** Writes the Parquet file beside `jsonl`, the task's JSON lines file. */
  private async write(
    task: TaskRow,
    jsonl: Pick<JsonLinesFile, 'file' | 'rows' | 'sha256'>,
    options: ParquetWriteOptions = {},
  ): Promise<ParquetFile> {
    const file = parquetPathBeside(jsonl.file);
    const metadata = parquetMetadata(task, jsonl.sha256);
    const stopping = () => this.stopping || (options.stopping?.() ?? false);
    const written = await writeParquet(task.platform, jsonl.file, file, metadata, {
      ...options,
      stopping,
    });
    // Cannot differ (one file is made from the other); checked because a download trusts it.
    if (written.rows !== jsonl.rows)
      throw new Error(
        `the Parquet file has ${written.rows} rows, the JSON lines file ${jsonl.rows}`,
      );
    return { file, bytes: written.bytes, sha256: written.sha256 };
  }

  /** Remembers the failure for PARQUET_RETRY_MS, forgetting those older (the map stays small). */
  private recordFailure(taskId: string, error: Error): void {
    const now = this.clock.now().getTime();
    for (const [id, at] of this.failedAt)
      if (now - at >= PARQUET_RETRY_MS) this.failedAt.delete(id);
    this.failedAt.set(taskId, now);
    this.logger.error(
      { task_id: taskId },
      `task ${taskId}: Parquet file not written (tried again at a download an hour from now): ${error.message}`,
    );
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
