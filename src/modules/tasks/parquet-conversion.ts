import { join } from 'node:path';
import { Writable } from 'node:stream';
import { Source } from '../../common/source';
import { startWorker } from '../../common/worker-thread';
import { WriteStopped } from './atomic-file';

/** What a Parquet worker converts: a task's JSON lines file, as compiled. */
export interface ParquetJob {
  platform: Source;
  jsonlPath: string;
  metadata: Readonly<Record<string, string>>;
}

/** From the worker: the file's next bytes (answered `more` once taken), or its end. */
export type ParquetWorkerMessage =
  { type: 'chunk'; chunk: Uint8Array } | { type: 'done'; rows: number };

/** How often a conversion looks whether it is to be given up (`stopping`). */
const STOP_CHECK_MS = 50;

/** parquet-worker.ts, as built or as source (startWorker). */
const WORKER_FILE = join(__dirname, 'parquet-worker');

/**
 * Converts `job` in a worker thread of its own, writing the file's bytes to `output` and ending
 * it; resolves to the number of rows. Encoding takes seconds of CPU per 100,000 rows and the
 * writer encodes each row group, and at its close the whole footer, in one go: on the event loop
 * that stalled every request, health checks included, for seconds (docs/decisions.md, "Parquet
 * too"). Here only the bytes pass through this thread: `output`'s backpressure holds the worker.
 * The worker's error is this promise's. Once `stopping` says so the worker is terminated and the
 * conversion rejects with WriteStopped; a worker ending without its file rejects it too.
 */
export function convertInWorker(
  job: ParquetJob,
  output: Writable,
  stopping: () => boolean,
): Promise<number> {
  if (stopping()) return Promise.reject(new WriteStopped());
  const worker = startWorker(WORKER_FILE, job);
  return new Promise<number>((resolve, reject) => {
    let ended = false;
    let rows: number | undefined;
    const stop = () => {
      if (ended) return false;
      ended = true;
      clearInterval(watch);
      output.off('close', closed);
      void worker.terminate();
      return true;
    };
    // Not `instanceof Error`: the worker's errors are made in the main realm, not jest's.
    const fail = (error: Error) => {
      if (stop()) reject(error);
    };
    const watch = setInterval(() => {
      if (stopping()) fail(new WriteStopped());
    }, STOP_CHECK_MS);
    // Destroyed by its writer's failure (writeFileAtomically): the worker has nowhere to write.
    const closed = () => fail(new Error('the Parquet output closed before the file was written'));
    output.once('close', closed);
    worker.on('message', (message: ParquetWorkerMessage) => {
      if (ended) return;
      if (message.type === 'done') {
        const done = message.rows;
        rows = done;
        output.end((error?: Error | null) => {
          if (error) fail(error);
          else if (stop()) resolve(done);
        });
        return;
      }
      const more = () => worker.postMessage('more');
      if (output.write(message.chunk)) more();
      else output.once('drain', more);
    });
    worker.once('error', fail);
    worker.once('exit', (code) => {
      // After its last message the worker may end before `output` has finished.
      if (rows === undefined) fail(new Error(`the Parquet worker ended (exit code ${code})`));
    });
  });
}
