import { createHash } from 'node:crypto';
import type { Stats } from 'node:fs';
import { FileHandle, open as openFile, stat } from 'node:fs/promises';
import type { ServerResponse } from 'node:http';
import { basename } from 'node:path';
import { Readable } from 'node:stream';
import {
  ConflictException,
  GoneException,
  Injectable,
  Logger,
  PreconditionFailedException,
  ServiceUnavailableException,
  StreamableFile,
} from '@nestjs/common';
import contentDisposition from 'content-disposition';
import { Clock } from '../../common/clock/clock';
import { AppConfig } from '../../config/app-config';
import { InjectConfig } from '../../config/config.module';
import {
  DatasetConditions,
  DatasetValidators,
  lastModifiedOf,
  notModified,
  preconditionRefused,
} from './dataset-conditions';
import { datasetFileHere } from './dataset-path';
import { DatasetParquetService, ParquetBusyError } from './dataset-parquet.service';
import { RecordedParquetFile, sizeOnDisk } from './dataset-writer';
import { recordedBytes } from './recorded-bytes';
import { Verdict, VerifiedFiles } from './verified-files';
import { DATASET_CONTENT_TYPES } from './task.mapper';
import { CompletedTask, DatasetFormat, isCompleted } from './task.types';
import { errorCode } from '../../common/files/error-code';
import { TasksService } from './tasks.service';
import {
  fileMissing,
  modifiedSince,
  notCompleted,
  ParquetBusyException,
  parquetUnavailable,
  preconditionFailed,
  taskFailed,
} from './dataset-download-errors';

const EXTENSIONS: Record<DatasetFormat, string> = { jsonl: 'jsonl.gz', parquet: 'parquet' };

/** A file this small is one read: hashed before it is answered (hashedBeforeAnswer). */
const HASHED_BEFORE_ANSWER_BYTES = 64 * 1024;

/**
 * What a download answers: the file (200; over an empty body for HEAD), that the client holds
 * it (304), or that it is not the file the client asked for by If-Match or If-Unmodified-Since
 * (412). Each says the file's validators, which the controller sends.
 */
export type DatasetAnswer = DatasetValidators &
  (
    | { status: 200; file: StreamableFile }
    | { status: 304 }
    | { status: 412; refusal: PreconditionFailedException }
  );

/** A dataset file as its task records it. */
type RecordedFile = { file: string; bytes: number };

/** How often a download's progress is looked at: a stall is closed this much past its time. */
const STALL_CHECK_MS = 1000;

/** Streams completed datasets; never a file that is not recorded as complete. */
@Injectable()
export class DatasetDownloadService {
  private readonly logger = new Logger(DatasetDownloadService.name);
  private readonly verified = new VerifiedFiles();

  constructor(
    private readonly tasks: TasksService,
    private readonly parquet: DatasetParquetService,
    private readonly clock: Clock,
    @InjectConfig() private readonly config: AppConfig,
  ) {}

  /**
   * The dataset file to stream, or the answer its conditions give: the 412 when If-Match names
   * another file (without If-Match: when the file was written after If-Unmodified-Since), else
   * the 304 when If-None-Match names this one (the client holds these very bytes; without
   * If-None-Match: when it was not written after If-Modified-Since). In the order of RFC 9110
   * §13.2.2, after every other check: a condition is about a file that is there. With
   * `headersOnly` (a HEAD request), its headers over an empty body. `found` is called once the
   * task is found, whatever the answer (the request's line names the task: not for an id no
   * task has, which may be any text a client sent).
   */
  async open(
    id: string,
    format: DatasetFormat,
    conditions: DatasetConditions = {},
    headersOnly = false,
    found: () => void = () => undefined,
  ): Promise<DatasetAnswer> {
    const task = await this.tasks.find(id);
    found();
    // Final: a pipeline waiting out the 409 below would wait for ever.
    if (task.state === 'failed') throw new GoneException(taskFailed(id, task.failure_reason));
    if (!isCompleted(task)) {
      throw new ConflictException(notCompleted(id, task.state));
    }
    // Every format is made from the JSON lines file: without it (or with it cut short), none can
    // be served. Its Last-Modified is the time the task records, the same on every replica (the
    // file's mtime is this disk's, and a copy or a restore moves it): `dataset_written_at`, set
    // by the compile that completed the task and moved by an author's erasure that wrote it
    // again, or `completed_at` for a file a release before that column recorded. Read by its
    // name under this server's DATA_DIR: the directory recorded is the compiling replica's.
    const jsonl = {
      file: datasetFileHere(this.config.dataDir, task.dataset_file),
      bytes: Number(task.dataset_bytes),
      sha256: task.dataset_sha256,
      writtenAt: task.dataset_written_at ?? task.completed_at,
    };
    await this.checkSize(jsonl, id);
    const served = format === 'parquet' ? await this.parquetOf(task, id) : jsonl;
    // The JSON lines file just was checked; a Parquet file is checked as it is about to be read.
    if (served !== jsonl) await this.checkSize(served, id);
    const { sha256, bytes: length } = served;
    const now = this.clock.now();
    const validators = { sha256, lastModified: lastModifiedOf(served.writtenAt, now) };
    // Opened before answering: a read stream opens its file after the headers are set, and one
    // deleted (or unreadable) in between was answered 400 'Bad Request' in text/plain by Nest's
    // stream error handler, or cut off after the headers were sent.
    const { handle, info } = await this.openRecorded(served, id);
    const refusal = preconditionRefused(conditions, validators, now);
    if (refusal) {
      await handle.close();
      const detail = refusal === 'If-Match' ? preconditionFailed(id) : modifiedSince(id);
      return {
        status: 412,
        ...validators,
        refusal: new PreconditionFailedException(detail),
      };
    }
    if (notModified(conditions, validators, served.writtenAt, now)) {
      await handle.close();
      return { status: 304, ...validators };
    }
    const headers = {
      type: DATASET_CONTENT_TYPES[format],
      length,
      disposition: attachment(`${task.id}.${EXTENSIONS[format]}`),
    };
    if (headersOnly) {
      // Checked and opened as for a GET, so the answer is the same, but not read: Node drops a
      // HEAD response's body as it is written, and the file was read whole to be dropped.
      await handle.close();
      return { status: 200, ...validators, file: new StreamableFile(Readable.from([]), headers) };
    }
    const key = this.verified.keyOf(info, sha256);
    // Known from an earlier download: 'recorded' spares this one the hash.
    const known = this.verified.verdictOf(key);
    const verdict = known ?? (await this.hashedBeforeAnswer(key, handle, served, id));
    if (verdict === 'other') {
      await handle.close();
      this.logger.warn(
        { task_id: id },
        `task ${id}: ${served.file} holds other bytes than the SHA-256 recorded names: answered as missing`,
      );
      throw new ServiceUnavailableException(fileMissing(id));
    }
    // Read up to the size known, so that the stream ends with its last byte: read to the end of
    // the file, it ends one more (empty) read later, and a client that closes on the last byte
    // (curl does) often closed before the response was ended, which was then logged and counted
    // as unanswered (found by a README audit: 23 of 83 complete downloads).
    const stream = handle.createReadStream(length > 0 ? { start: 0, end: length - 1 } : {});
    const checked = recordedBytes(
      stream,
      length,
      known
        ? {
            // By its path: the stream closes its handle as it ends. Renamed over or written
            // in place, it is another file.
            unchanged: () =>
              stat(served.file).then((now) => this.verified.keyOf(now, sha256) === key),
          }
        : {
            sha256,
            onHashed: (recorded) => this.verified.record(key, recorded ? 'recorded' : 'other'),
          },
    );
    const file = new StreamableFile(checked, headers).setErrorHandler((error, response) => {
      this.logger.warn(
        { task_id: id },
        `task ${id}: ${basename(served.file)} could not be sent whole (${error.message}): connection closed`,
      );
      // Closed, not ended: an ended response looks complete, and a client on a kept-alive
      // connection waits for the missing bytes until the server's keep-alive timeout. Closed,
      // the client sees the download broken off (curl: a partial file); before any byte, an
      // empty reply, where Nest's default answered 400 'Bad Request' in text/plain.
      if (!response.destroyed) response.destroy?.();
    });
    return { status: 200, ...validators, file };
  }

  /**
   * Closes the download of `file` to `response` once its client has read nothing for
   * DOWNLOAD_STALL_TIMEOUT_MS. A client that stops reading, its connection left open, held the
   * file's descriptor, its stream and the socket for good: Nest destroys the stream only when the
   * response closes, and nothing closed it. Progress is the socket's own: a byte handed to it
   * (`bytesWritten`) or one its buffer passed on to the kernel (`writableLength` falling), so a
   * slow reader is not cut off. Not Node's socket timeout: it lets a timer that runs out while
   * its last write is still draining start once more, and a stalled download was closed after
   * twice the setting (an HTTP audit). The check stops when the response is done; the socket
   * keeps its keep-alive timeout.
   */
  closeWhenStalled(
    file: StreamableFile,
    response: ServerResponse,
    id: string,
    format: DatasetFormat,
  ): void {
    const stallMs = this.config.tasks.downloadStallTimeoutMs;
    // The connection, also while a pipelined answer waits for its turn (no socket of its own
    // yet): a client that left then never closes the response, and the check would run for good.
    const connection = response.req.socket;
    const gone = () => response.destroyed || connection.destroyed;
    if (gone()) {
      file.getStream().destroy();
      return;
    }
    const progressOf = () => `${response.socket?.bytesWritten}:${response.socket?.writableLength}`;
    let seen = progressOf();
    let since = performance.now();
    const check = setInterval(
      () => {
        if (gone()) {
          clearInterval(check);
          file.getStream().destroy();
          return;
        }
        const now = progressOf();
        if (now !== seen || response.socket === null) {
          seen = now;
          since = performance.now();
          return;
        }
        if (performance.now() - since < stallMs) return;
        clearInterval(check);
        this.logger.warn(
          { task_id: id },
          `task ${id}: ${format} download made no progress for ${stallMs} ms: connection closed`,
        );
        file.getStream().destroy();
        response.destroy();
      },
      Math.min(STALL_CHECK_MS, stallMs / 10),
    ).unref();
    response.once('close', () => clearInterval(check));
  }

  private async parquetOf(task: CompletedTask, id: string): Promise<RecordedParquetFile> {
    const parquet = await this.parquet.ensure(task).catch((error: unknown) => {
      if (error instanceof ParquetBusyError) throw new ParquetBusyException(id);
      throw error;
    });
    if (!parquet) throw new ServiceUnavailableException(parquetUnavailable(id));
    return parquet;
  }

  /**
   * Fails unless a file the task records has the size it recorded: a file cut short
   * or replaced is not the file its hash (X-Content-SHA256, ETag) names, and is answered as
   * missing (503), as the Parquet service writes such a Parquet file again. The warning names
   * the path tried (the log's alone: the answer names no server path).
   */
  private async checkSize(recorded: RecordedFile, id: string): Promise<void> {
    this.refuseOtherSize(await sizeOnDisk(recorded.file), recorded, id);
  }

  private refuseOtherSize(size: number | undefined, recorded: RecordedFile, id: string): void {
    if (size === recorded.bytes) return;
    this.logger.warn(
      { task_id: id },
      size === undefined
        ? `task ${id}: ${recorded.file} is not on disk: answered as missing`
        : `task ${id}: ${recorded.file} has ${size} bytes, not the ${recorded.bytes} recorded: answered as missing`,
    );
    throw new ServiceUnavailableException(fileMissing(id));
  }

  /**
   * A file of one read's size, hashed before it is answered: streamed, its bytes were all held
   * back until the hash was known, and a client of other bytes got an empty reply where the 503
   * of a missing file could still be sent (a downloads audit). Undefined for a larger file: its
   * stream hashes it (recordedBytes). Its stream hashes a small one again too, at no cost worth
   * sparing: it may change between the two reads.
   */
  private async hashedBeforeAnswer(
    key: string,
    handle: FileHandle,
    recorded: RecordedFile & { sha256: string },
    id: string,
  ): Promise<Verdict | undefined> {
    const length = recorded.bytes;
    if (length > HASHED_BEFORE_ANSWER_BYTES) return undefined;
    const buffer = Buffer.alloc(length);
    let filled = 0;
    try {
      // A read may give fewer bytes than asked (some network and FUSE file systems).
      for (let read = -1; filled < length && read !== 0; filled += read)
        ({ bytesRead: read } = await handle.read(buffer, filled, length - filled, filled));
    } catch (error) {
      // Answered as the missing file it is here, its descriptor closed (a review: a 500, and a
      // descriptor left to the garbage collector).
      await handle.close();
      this.logger.warn(
        { task_id: id },
        `task ${id}: ${recorded.file} cannot be read (${errorCode(error)}): answered as missing`,
      );
      throw new ServiceUnavailableException(fileMissing(id));
    }
    // Shorter than its size said: no verdict kept, its stream tells.
    if (filled < length) return undefined;
    const digest = createHash('sha256').update(buffer).digest('hex');
    const verdict: Verdict = digest === recorded.sha256 ? 'recorded' : 'other';
    this.verified.record(key, verdict);
    return verdict;
  }

  /**
   * The file opened for reading, with what it is on disk, or the 503 of a missing file when it
   * cannot be, or when the file opened is not of the recorded size: one replaced between the
   * check by path and the open was sent with the recorded Content-Length, cut short or with
   * bytes left out.
   */
  private async openRecorded(
    recorded: RecordedFile,
    id: string,
  ): Promise<{ handle: FileHandle; info: Stats }> {
    let handle: FileHandle;
    try {
      handle = await openFile(recorded.file, 'r');
    } catch (error) {
      this.logger.warn(
        { task_id: id },
        `task ${id}: ${recorded.file} cannot be opened (${errorCode(error)}): answered as missing`,
      );
      throw new ServiceUnavailableException(fileMissing(id));
    }
    try {
      const info = await handle.stat().catch(() => undefined);
      this.refuseOtherSize(info?.size, recorded, id);
      return { handle, info: info! };
    } catch (error) {
      await handle.close();
      throw error;
    }
  }
}

/**
 * `attachment; filename="<name>"` (RFC 6266). A name that is not ASCII (ids may hold any
 * printable character) also goes as `filename*=UTF-8''<percent-encoded>` (RFC 8187), which
 * browsers prefer, after an ASCII `filename` (other characters as `_`) for the clients that do
 * not read it. Quotes and backslashes are escaped in `filename`.
 */
function attachment(name: string): string {
  // By code point: an emoji is one character, one `_` (an audit's finding).
  return contentDisposition(name, { fallback: name.replace(/[^\x20-\x7e]/gu, '_') });
}
