import { once } from 'node:events';
import type * as crypto from 'node:crypto';
import { createHash } from 'node:crypto';
import {
  mkdirSync,
  mkdtempSync,
  renameSync,
  rmSync,
  statSync,
  truncateSync,
  unlinkSync,
  utimesSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import {
  ConflictException,
  GoneException,
  Logger,
  PreconditionFailedException,
  ServiceUnavailableException,
} from '@nestjs/common';
import { Clock } from '../../common/clock/clock';
import { DatasetConditions } from './dataset-conditions';
import { DatasetDownloadService } from './dataset-download.service';
import { fileMissing, modifiedSince, preconditionFailed } from './dataset-download-errors';
import { ChangedWhileSentError, CutShortError, OtherBytesError } from './recorded-bytes';
import { DatasetParquetService } from './dataset-parquet.service';
import * as datasetWriter from './dataset-writer';
import { CompletedTask, DatasetFormat } from './task.types';
import { TasksService } from './tasks.service';
import { testConfig } from '../../../test/support/test-config';

// A plain copy of the module, whose exports a test can spy on: the transform's CommonJS
// exports are read-only getters (docs/decisions.md, "Test tiers").
jest.mock('./dataset-writer', () => ({
  __esModule: true,
  ...jest.requireActual<object>('./dataset-writer'),
}));

const JSONL = Buffer.from('the JSON lines file');
const PARQUET = Buffer.from('PAR1 the Parquet file PAR1');
const OTHER = Buffer.from('another file, of another size');
/** When the task completed (its JSON lines file written), and its Parquet file written. */
const COMPLETED_AT = new Date('2026-12-01T10:20:30.456Z');
const PARQUET_WRITTEN_AT = new Date('2026-12-02T08:00:00.999Z');
const NOW = new Date('2026-12-03T12:00:00.500Z');

describe(DatasetDownloadService.name, () => {
  let dataDir: string;
  let files: Record<DatasetFormat, string>;
  let service: DatasetDownloadService;
  let warned: jest.SpyInstance;
  let task: CompletedTask;
  let parquetWrittenAt: Date | null;

  const recorded = (file: string, bytes: Buffer) => ({
    file,
    bytes: bytes.length,
    sha256: createHash('sha256').update(bytes).digest('hex'),
  });

  beforeEach(() => {
    warned = jest.spyOn(Logger.prototype, 'warn').mockImplementation(() => undefined);
    dataDir = mkdtempSync(join(tmpdir(), 'dataset-download-'));
    const directory = join(dataDir, 'datasets');
    mkdirSync(directory);
    files = { jsonl: join(directory, 'btc.jsonl.gz'), parquet: join(directory, 'btc.parquet') };
    writeFileSync(files.jsonl, JSONL);
    writeFileSync(files.parquet, PARQUET);
    const jsonl = recorded(files.jsonl, JSONL);
    task = {
      id: 'btc',
      state: 'completed',
      completed_at: COMPLETED_AT,
      dataset_file: jsonl.file,
      dataset_bytes: String(jsonl.bytes),
      dataset_sha256: jsonl.sha256,
      // Recorded by a release before migration 1765010000000: the completion is its time.
      dataset_written_at: null,
    } as CompletedTask;
    parquetWrittenAt = PARQUET_WRITTEN_AT;
    service = new DatasetDownloadService(
      { find: () => Promise.resolve(task) } as unknown as TasksService,
      {
        ensure: () =>
          Promise.resolve({ ...recorded(files.parquet, PARQUET), writtenAt: parquetWrittenAt }),
      } as unknown as DatasetParquetService,
      { now: () => NOW } as Clock,
      testConfig({ dataDir }),
    );
  });
  afterEach(() => {
    jest.restoreAllMocks();
    rmSync(dataDir, { recursive: true, force: true });
  });

  /** The file `open` answers with (a 200), failing on any other answer. */
  async function opened(...args: Parameters<DatasetDownloadService['open']>) {
    const answer = await service.open(...args);
    if (answer.status !== 200) throw new Error(`answered ${answer.status}, not the file`);
    return answer;
  }

  async function bytesOf(stream: Readable): Promise<Buffer> {
    const chunks: Buffer[] = [];
    for await (const chunk of stream) chunks.push(chunk as Buffer);
    return Buffer.concat(chunks);
  }

  it.each([
    ['jsonl', JSONL],
    ['parquet', PARQUET],
  ] as const)(
    'has the %s file open when it answers: deleted then, its bytes are still sent',
    async (format, bytes) => {
      const { file } = await opened('btc', format);
      unlinkSync(files[format]);
      expect(await bytesOf(file.getStream())).toEqual(bytes);
    },
  );

  // The directory a task records is the compiling replica's: another replica may mount the
  // shared volume elsewhere, and a DATA_DIR may be restored to a new mount.
  it('reads the JSON lines file by its name under this DATA_DIR, whatever directory the task recorded, and names the path tried when it is missing', async () => {
    task = {
      ...task,
      dataset_file: join(tmpdir(), 'another-replicas-data', 'datasets', 'btc.jsonl.gz'),
    };
    expect(await bytesOf((await opened('btc', 'jsonl')).file.getStream())).toEqual(JSONL);

    unlinkSync(files.jsonl);
    await expect(service.open('btc', 'jsonl')).rejects.toThrow(fileMissing('btc'));
    expect(warned.mock.calls).toEqual([
      [{ task_id: 'btc' }, `task btc: ${files.jsonl} is not on disk: answered as missing`],
    ]);
  });

  // Stored before parseId refused control characters: every message quoting the id escapes them,
  // as the 404 of an unknown id does (a client printing the detail would obey an ESC).
  describe('a stored id holding control characters', () => {
    const id = 'btc\u001b[31m\u0085';
    const quoted = "'btc\\u001b[31m\\u0085'";

    it('is quoted as escapes in the 410 of a failed task', async () => {
      task = { ...task, id, state: 'failed', failure_reason: 'ENOSPC' } as unknown as CompletedTask;
      await expect(service.open(id, 'jsonl')).rejects.toThrow(
        new GoneException(
          `Task ${quoted} failed and has no dataset: ENOSPC (an operator may have it compiled again)`,
        ),
      );
    });

    it('is quoted as escapes in the 409 of an active task', async () => {
      task = { ...task, id, state: 'active' } as unknown as CompletedTask;
      await expect(service.open(id, 'jsonl')).rejects.toThrow(
        new ConflictException(
          `Task ${quoted} is active; its dataset is available once the task has completed`,
        ),
      );
    });

    it('is quoted as escapes in the 503 of a missing file', async () => {
      task = { ...task, id };
      unlinkSync(files.jsonl);
      await expect(service.open(id, 'jsonl')).rejects.toThrow(
        `The dataset file of task ${quoted} is missing on this server`,
      );
    });
  });

  // Deleted between its size check and the download (a cleanup, an operator): the stream opened
  // it after the headers were set, and failed as a 400 in text/plain.
  it.each(['jsonl', 'parquet'] as const)(
    'answers the 503 of a missing file when the %s file cannot be opened after its size check',
    async (format) => {
      const sizeOnDisk = datasetWriter.sizeOnDisk;
      jest.spyOn(datasetWriter, 'sizeOnDisk').mockImplementation(async (file) => {
        const size = await sizeOnDisk(file);
        if (file === files[format]) unlinkSync(file);
        return size;
      });
      const refused = service.open('btc', format);
      await expect(refused).rejects.toThrow(ServiceUnavailableException);
      await expect(refused).rejects.toThrow(fileMissing('btc'));
      expect(warned).toHaveBeenCalledWith(
        { task_id: 'btc' },
        expect.stringContaining('cannot be opened (ENOENT): answered as missing'),
      );
    },
  );

  // Replaced (renamed over) between its size check and the open: the new file's bytes went out
  // under the recorded Content-Length, cut short or with the rest left out.
  it.each(['jsonl', 'parquet'] as const)(
    'answers the 503 of a missing file when the %s file opened is not of the recorded size',
    async (format) => {
      const sizeOnDisk = datasetWriter.sizeOnDisk;
      jest.spyOn(datasetWriter, 'sizeOnDisk').mockImplementation(async (file) => {
        const size = await sizeOnDisk(file);
        if (file === files[format]) {
          writeFileSync(`${file}.new`, OTHER);
          renameSync(`${file}.new`, file);
        }
        return size;
      });
      const refused = service.open('btc', format);
      await expect(refused).rejects.toThrow(ServiceUnavailableException);
      await expect(refused).rejects.toThrow(fileMissing('btc'));
      const recordedBytes = (format === 'jsonl' ? JSONL : PARQUET).length;
      expect(warned).toHaveBeenCalledWith(
        { task_id: 'btc' },
        expect.stringContaining(
          `has ${OTHER.length} bytes, not the ${recordedBytes} recorded: answered as missing`,
        ),
      );
    },
  );

  it('answers the 503 of a missing file, not 304, when If-None-Match names a file that cannot be opened', async () => {
    const { sha256 } = recorded(files.jsonl, JSONL);
    const sizeOnDisk = datasetWriter.sizeOnDisk;
    jest.spyOn(datasetWriter, 'sizeOnDisk').mockImplementation(async (file) => {
      const size = await sizeOnDisk(file);
      unlinkSync(file);
      return size;
    });
    await expect(service.open('btc', 'jsonl', { ifNoneMatch: `"${sha256}"` })).rejects.toThrow(
      fileMissing('btc'),
    );
  });

  // Streamed, a HEAD's file was read whole for Node to drop its bytes.
  it.each([
    ['jsonl', JSONL],
    ['parquet', PARQUET],
  ] as const)(
    'answers a HEAD of the %s file with its headers, without reading it',
    async (format, bytes) => {
      const { file, sha256 } = await opened('btc', format, {}, true);
      expect(sha256).toBe(recorded(files[format], bytes).sha256);
      expect(file.getHeaders()).toEqual({
        type: format === 'jsonl' ? 'application/gzip' : 'application/vnd.apache.parquet',
        length: bytes.length,
        disposition: `attachment; filename="btc.${format === 'jsonl' ? 'jsonl.gz' : 'parquet'}"`,
      });
      expect(await bytesOf(file.getStream())).toEqual(Buffer.alloc(0));
    },
  );

  it('answers 304 (no file) when If-None-Match names the file', async () => {
    const { sha256 } = recorded(files.jsonl, JSONL);
    expect(await service.open('btc', 'jsonl', { ifNoneMatch: `"${sha256}"` })).toEqual({
      status: 304,
      sha256,
      lastModified: new Date('2026-12-01T10:20:30Z'),
    });
  });

  // Weak comparison (RFC 9110 §13.1.2), unlike If-Match's: a cache may send the tag back weak.
  it('answers 304 when If-None-Match names the file by its tag made weak', async () => {
    const { sha256 } = recorded(files.jsonl, JSONL);
    const answer = await service.open('btc', 'jsonl', { ifNoneMatch: `"other", W/"${sha256}"` });
    expect(answer.status).toBe(304);
  });

  describe('If-Match', () => {
    const tag = () => `"${recorded(files.jsonl, JSONL).sha256}"`;

    it.each([
      ['the tag', tag],
      ['*', () => '*'],
      ['a list holding the tag', () => `"other", ${tag()}`],
    ])('sends the file when If-Match is %s', async (_case, ifMatch) => {
      const { file } = await opened('btc', 'jsonl', { ifMatch: ifMatch() });
      expect(await bytesOf(file.getStream())).toEqual(JSONL);
    });

    // Strong comparison (RFC 9110 §13.1.1): a weak tag names no bytes.
    it.each([
      ['another tag', () => '"other"'],
      ['the tag as weak', () => `W/${tag()}`],
      ['empty', () => ''],
    ])('answers 412 when If-Match is %s', async (_case, ifMatch) => {
      const answer = await service.open('btc', 'jsonl', { ifMatch: ifMatch() });
      expect(answer).toEqual({
        status: 412,
        sha256: recorded(files.jsonl, JSONL).sha256,
        lastModified: new Date('2026-12-01T10:20:30Z'),
        refusal: expect.any(PreconditionFailedException),
      });
      expect(answer.status === 412 && answer.refusal.message).toBe(preconditionFailed('btc'));
    });

    // RFC 9110 §13.2.2: If-Match is evaluated first, and a false one is the answer.
    it('answers 412, not 304, when If-Match names another file and If-None-Match this one', async () => {
      const answer = await service.open('btc', 'jsonl', { ifMatch: '"other"', ifNoneMatch: tag() });
      expect(answer.status).toBe(412);
      expect(
        (await service.open('btc', 'jsonl', { ifMatch: tag(), ifNoneMatch: tag() })).status,
      ).toBe(304);
    });

    // A condition is about a file that is there: `*` too.
    it('answers the 503 of a missing file, not 200 or 412, when the file is gone', async () => {
      unlinkSync(files.jsonl);
      for (const ifMatch of ['*', '"other"'])
        await expect(service.open('btc', 'jsonl', { ifMatch })).rejects.toThrow(fileMissing('btc'));
    });
  });

  // RFC 9110 §8.8.2: a server that can say when the file was last modified sends Last-Modified,
  // and the date conditions compare with it (§13.1.3, §13.1.4, in the order of §13.2.2).
  describe('Last-Modified and the date conditions', () => {
    const status = async (format: DatasetFormat, conditions: DatasetConditions) =>
      (await service.open('btc', format, conditions)).status;
    const tag = (format: DatasetFormat) =>
      `"${recorded(files[format], format === 'jsonl' ? JSONL : PARQUET).sha256}"`;

    it.each([
      ['jsonl', '2026-12-01T10:20:30Z'],
      ['parquet', '2026-12-02T08:00:00Z'],
    ] as const)(
      'says when the %s file was written, as the task records it, to the second',
      async (format, second) => {
        for (const headersOnly of [false, true]) {
          const answer = await service.open('btc', format, {}, headersOnly);
          expect(answer.lastModified).toEqual(new Date(second));
        }
        expect(
          (await service.open('btc', format, { ifNoneMatch: tag(format) })).lastModified,
        ).toEqual(new Date(second));
      },
    );

    // An author's erasure wrote it again without the author's rows, and kept the completion.
    it('says when the JSON lines file was written again, not the completion, once the task records it', async () => {
      task.dataset_written_at = new Date('2026-12-02T09:30:00.700Z');
      expect((await service.open('btc', 'jsonl')).lastModified).toEqual(
        new Date('2026-12-02T09:30:00Z'),
      );
      // A client holding the file sent with the completion's date gets the new one.
      expect(await status('jsonl', { ifModifiedSince: 'Tue, 01 Dec 2026 10:20:30 GMT' })).toBe(200);
      expect(await status('jsonl', { ifModifiedSince: 'Wed, 02 Dec 2026 09:30:00 GMT' })).toBe(304);
      expect(await status('jsonl', { ifUnmodifiedSince: 'Tue, 01 Dec 2026 10:20:30 GMT' })).toBe(
        412,
      );
    });

    it('says none when the task records no time, and then ignores the date conditions', async () => {
      task.completed_at = null;
      parquetWrittenAt = null;
      for (const format of ['jsonl', 'parquet'] as const) {
        expect((await service.open('btc', format)).lastModified).toBeNull();
        // With a time, each would decide: a 304 at now, a 412 before the file was written.
        expect(await status(format, { ifModifiedSince: 'Thu, 03 Dec 2026 12:00:00 GMT' })).toBe(
          200,
        );
        expect(await status(format, { ifUnmodifiedSince: 'Tue, 01 Dec 2026 10:20:29 GMT' })).toBe(
          200,
        );
      }
    });

    // RFC 9110 §8.8.2.1: never later than the time of the answer, by this server's clock.
    it('says now for a time after now (another replica’s clock ahead of this one)', async () => {
      task.completed_at = new Date('2026-12-03T12:00:09Z');
      expect((await service.open('btc', 'jsonl')).lastModified).toEqual(
        new Date('2026-12-03T12:00:00Z'),
      );
      // A client may hold another file sent with this very date: its date says nothing.
      expect(await status('jsonl', { ifModifiedSince: 'Thu, 03 Dec 2026 12:00:00 GMT' })).toBe(200);
      expect(await status('jsonl', { ifNoneMatch: tag('jsonl') })).toBe(304);
    });

    it.each([
      ['jsonl', 'Tue, 01 Dec 2026 10:20:30 GMT', 'Tue, 01 Dec 2026 10:20:29 GMT'],
      ['parquet', 'Wed, 02 Dec 2026 08:00:00 GMT', 'Wed, 02 Dec 2026 07:59:59 GMT'],
    ] as const)(
      'answers %s If-Modified-Since at or after Last-Modified 304, before it 200',
      async (format, at, before) => {
        expect(await status(format, { ifModifiedSince: at })).toBe(304);
        expect(await status(format, { ifModifiedSince: 'Thu, 03 Dec 2026 12:00:00 GMT' })).toBe(
          304,
        );
        expect(await status(format, { ifModifiedSince: before })).toBe(200);
      },
    );

    it.each([
      ['jsonl', 'Tue, 01 Dec 2026 10:20:30 GMT', 'Tue, 01 Dec 2026 10:20:29 GMT'],
      ['parquet', 'Wed, 02 Dec 2026 08:00:00 GMT', 'Wed, 02 Dec 2026 07:59:59 GMT'],
    ] as const)(
      'answers %s If-Unmodified-Since at or after Last-Modified 200, before it 412',
      async (format, at, before) => {
        expect(await status(format, { ifUnmodifiedSince: at })).toBe(200);
        const answer = await service.open('btc', format, { ifUnmodifiedSince: before });
        expect(answer).toEqual({
          status: 412,
          sha256: tag(format).slice(1, -1),
          lastModified: expect.any(Date),
          refusal: expect.any(PreconditionFailedException),
        });
        expect(answer.status === 412 && answer.refusal.message).toBe(modifiedSince('btc'));
      },
    );

    // §13.1.3: a date later than the server's time says nothing of what the client holds.
    it('ignores an If-Modified-Since later than now', async () => {
      expect(await status('jsonl', { ifModifiedSince: 'Thu, 03 Dec 2026 12:00:01 GMT' })).toBe(200);
      expect(await status('jsonl', { ifModifiedSince: 'Fri, 01 Jan 2100 00:00:00 GMT' })).toBe(200);
    });

    it('reads the two obsolete HTTP-date forms', async () => {
      expect(await status('jsonl', { ifModifiedSince: 'Tuesday, 01-Dec-26 10:20:30 GMT' })).toBe(
        304,
      );
      expect(await status('jsonl', { ifModifiedSince: 'Tue Dec  1 10:20:30 2026' })).toBe(304);
      expect(await status('jsonl', { ifUnmodifiedSince: 'Tue Dec  1 10:20:29 2026' })).toBe(412);
    });

    // §13.1.3, §13.1.4: a value that is no HTTP-date is ignored, not read as a date.
    it.each([
      'garbage',
      '1',
      '2026-12-03',
      '',
      'Tue, 31 Nov 2026 10:20:30 GMT',
      'Tue, 01 Dec 2026 10:20:30 GMT, Tue, 01 Dec 2026 10:20:30 GMT',
    ])('ignores the date conditions when the value is %j', async (value) => {
      expect(await status('jsonl', { ifModifiedSince: value })).toBe(200);
      expect(await status('jsonl', { ifUnmodifiedSince: value })).toBe(200);
    });

    it('looks at If-None-Match alone when both it and If-Modified-Since are given', async () => {
      const unmodified = 'Thu, 03 Dec 2026 12:00:00 GMT';
      expect(await status('jsonl', { ifNoneMatch: '"other"', ifModifiedSince: unmodified })).toBe(
        200,
      );
      expect(
        await status('jsonl', {
          ifNoneMatch: tag('jsonl'),
          ifModifiedSince: 'Tue, 01 Dec 2026 10:20:29 GMT',
        }),
      ).toBe(304);
    });

    it('looks at If-Match alone when both it and If-Unmodified-Since are given', async () => {
      const modified = 'Tue, 01 Dec 2026 10:20:29 GMT';
      expect(await status('jsonl', { ifMatch: tag('jsonl'), ifUnmodifiedSince: modified })).toBe(
        200,
      );
      const answer = await service.open('btc', 'jsonl', {
        ifMatch: '"other"',
        ifUnmodifiedSince: 'Thu, 03 Dec 2026 12:00:00 GMT',
      });
      expect(answer.status === 412 && answer.refusal.message).toBe(preconditionFailed('btc'));
    });

    // §13.2.2: the 412 conditions (steps 1 and 2) before the 304 ones (steps 3 and 4).
    it('answers 412, not 304, when If-Unmodified-Since fails and If-None-Match names the file', async () => {
      expect(
        await status('jsonl', {
          ifUnmodifiedSince: 'Tue, 01 Dec 2026 10:20:29 GMT',
          ifNoneMatch: tag('jsonl'),
        }),
      ).toBe(412);
    });
  });

  // Cut short in place after its size was checked, the file's stream just ended early, and the
  // response piped from it was ended short of its Content-Length, as if complete.
  describe('a file cut short while it is sent', () => {
    it('fails its stream instead of ending it, saying how many bytes it had', async () => {
      const { file } = await opened('btc', 'jsonl');
      truncateSync(files.jsonl, 5);
      await expect(bytesOf(file.getStream())).rejects.toThrow(new CutShortError(5, JSONL.length));
    });

    // Once headers are out Nest's own handler destroys too; before them, it answered 400 in
    // text/plain, outside the document: the two cases, each held to the connection closed.
    it.each([true, false])(
      'closes the connection, answering nothing more, and warns naming the task (headers sent: %s)',
      async (headersSent) => {
        const { file } = await opened('btc', 'parquet');
        file.getStream().destroy();
        const response = {
          destroyed: false,
          headersSent,
          destroy: jest.fn(),
          end: jest.fn(),
          send: jest.fn(),
          status: jest.fn(),
          statusCode: 200,
        };
        file.errorHandler(new CutShortError(5, PARQUET.length), response);
        expect(response.destroy).toHaveBeenCalled();
        expect(response.end).not.toHaveBeenCalled();
        expect(response.send).not.toHaveBeenCalled();
        expect(response.status).not.toHaveBeenCalled();
        expect(response.statusCode).toBe(200);
        expect(warned).toHaveBeenCalledWith(
          { task_id: 'btc' },
          `task btc: btc.parquet could not be sent whole (the file ended after 5 of its ${PARQUET.length} bytes): connection closed`,
        );
      },
    );

    // A flipped bit, the size kept, was sent whole under the recorded hash (a filesystem faults
    // audit): a client had every promised byte, and a 200.
    it.each(['jsonl', 'parquet'] as const)(
      'fails the stream of a %s file changed in place short of its last bytes',
      async (format) => {
        const { file } = await opened('btc', format);
        const recorded = format === 'jsonl' ? JSONL : PARQUET;
        const changed = Buffer.from(recorded);
        changed[changed.length >> 1] ^= 1;
        writeFileSync(files[format], changed);
        const received: Buffer[] = [];
        const stream = file.getStream();
        stream.on('data', (chunk: Buffer) => received.push(chunk));
        await expect(once(stream, 'end')).rejects.toThrow(OtherBytesError);
        expect(Buffer.concat(received).length).toBeLessThan(recorded.length);
      },
    );

    // A read that failed there was a 500, its descriptor left open (a review).
    it('answers the 503 of a missing file, its descriptor closed, when a small file cannot be read', async () => {
      // The module itself: `import * as` gives a copy of its functions.
      // eslint-disable-next-line @typescript-eslint/no-require-imports
      const promises = require('node:fs/promises') as typeof import('node:fs/promises');
      const open = promises.open;
      let closed = false;
      jest.spyOn(promises, 'open').mockImplementation(async (...args) => {
        const handle = await open(...args);
        jest
          .spyOn(handle, 'read')
          .mockRejectedValue(Object.assign(new Error('EIO: i/o error, read'), { code: 'EIO' }));
        const close = handle.close.bind(handle);
        jest.spyOn(handle, 'close').mockImplementation(() => ((closed = true), close()));
        return handle;
      });
      await expect(service.open('btc', 'jsonl')).rejects.toThrow(fileMissing('btc'));
      expect(closed).toBe(true);
      expect(warned).toHaveBeenCalledWith(
        { task_id: 'btc' },
        `task btc: ${files.jsonl} cannot be read (EIO): answered as missing`,
      );
    });

    // A file of one read's size was held back whole: the client got an empty reply, where the
    // documented 503 could still be sent (a downloads audit).
    it('answers the 503 of a missing file, before any byte, for a small file of other bytes', async () => {
      const changed = Buffer.from(JSONL);
      changed[0] ^= 1;
      writeFileSync(files.jsonl, changed);
      await expect(service.open('btc', 'jsonl')).rejects.toThrow(fileMissing('btc'));
      expect(warned).toHaveBeenCalledWith(
        { task_id: 'btc' },
        `task btc: ${files.jsonl} holds other bytes than the SHA-256 recorded names: answered as missing`,
      );
    });

    describe('a file of more than one read', () => {
      const LARGE = Buffer.alloc(200 * 1024, 7);
      beforeEach(() => {
        writeFileSync(files.jsonl, LARGE);
        const large = recorded(files.jsonl, LARGE);
        task = { ...task, dataset_bytes: String(large.bytes), dataset_sha256: large.sha256 };
      });

      // wget tried 20 times, each a whole read, hash and send cut short (a downloads audit).
      it('answers the 503 at once once a download found its bytes other', async () => {
        const changed = Buffer.from(LARGE);
        changed[1000] ^= 1;
        writeFileSync(files.jsonl, changed);
        const { file } = await opened('btc', 'jsonl');
        await expect(bytesOf(file.getStream())).rejects.toThrow(OtherBytesError);
        await expect(service.open('btc', 'jsonl')).rejects.toThrow(fileMissing('btc'));
      });

      // Found whole, then written over in place while the next download was sent: not hashed,
      // it went out whole under the recorded hash (a review).
      it('breaks off a download of a file found whole before when it changes while sent', async () => {
        await bytesOf((await opened('btc', 'jsonl')).file.getStream());
        const stream = (await opened('btc', 'jsonl')).file.getStream();
        const received: Buffer[] = [];
        stream.on('data', (chunk: Buffer) => {
          if (received.push(chunk) === 1) writeFileSync(files.jsonl, Buffer.alloc(LARGE.length, 8));
        });
        await expect(once(stream, 'end')).rejects.toThrow(ChangedWhileSentError);
        expect(Buffer.concat(received).length).toBeLessThan(LARGE.length);
      });

      // `cp -p` and `touch -r` restore the times they can: the change time still tells.
      it('hashes again a file changed in place with its modification time put back', async () => {
        // A whole second, which the file's times hold exactly when put back.
        const second = 1_796_000_000;
        utimesSync(files.jsonl, second, second);
        await bytesOf((await opened('btc', 'jsonl')).file.getStream());
        const changed = Buffer.from(LARGE);
        changed[1000] ^= 1;
        writeFileSync(files.jsonl, changed);
        utimesSync(files.jsonl, second, second);
        expect(statSync(files.jsonl).mtimeMs).toBe(second * 1000);
        const { file } = await opened('btc', 'jsonl');
        await expect(bytesOf(file.getStream())).rejects.toThrow(OtherBytesError);
      });

      // What was found is found against a hash: recorded anew, the file is judged anew.
      it('judges a file again against a hash recorded since', async () => {
        const changed = Buffer.from(LARGE);
        changed[1000] ^= 1;
        writeFileSync(files.jsonl, changed);
        await expect(bytesOf((await opened('btc', 'jsonl')).file.getStream())).rejects.toThrow(
          OtherBytesError,
        );
        task = { ...task, dataset_sha256: recorded(files.jsonl, changed).sha256 };
        expect(await bytesOf((await opened('btc', 'jsonl')).file.getStream())).toEqual(changed);
      });

      // Hashed at every download, a file cost 2–4 ms of CPU per MB more (a downloads audit).
      it('does not hash again a file a download found whole', async () => {
        expect(await bytesOf((await opened('btc', 'jsonl')).file.getStream())).toEqual(LARGE);
        // The module itself: `import * as` gives a copy of its functions.
        // eslint-disable-next-line @typescript-eslint/no-require-imports
        const hashing = jest.spyOn(require('node:crypto') as typeof crypto, 'createHash');
        expect(await bytesOf((await opened('btc', 'jsonl')).file.getStream())).toEqual(LARGE);
        expect(hashing).not.toHaveBeenCalled();
      });
    });

    it('ends the stream of a whole file as it is', async () => {
      const { file } = await opened('btc', 'parquet');
      expect(await bytesOf(file.getStream())).toEqual(PARQUET);
    });
  });
});
