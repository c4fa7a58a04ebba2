import { Writable } from 'node:stream';
import { MessagePort, parentPort, workerData } from 'node:worker_threads';
import { encodeParquet } from './parquet-encoder';
import type { ParquetJob, ParquetWorkerMessage } from './parquet-conversion';

/*
 * A worker thread's entry: encodes one task's Parquet file (ParquetJob) and sends its bytes to
 * the thread that started it, which writes them to the file (convertInWorker). Errors end the
 * thread with the error, which the starting thread gets.
 */

/**
 * Sends each chunk written to the parent thread and waits for its `more` before taking the next,
 * so that a slow disk holds the encoder back rather than piling chunks up in the parent. Chunks
 * written meanwhile (the footer's many small ones) go together in one message.
 */
class ToParent extends Writable {
  constructor(private readonly port: MessagePort) {
    super();
  }

  override _writev(chunks: { chunk: Buffer }[], callback: (error?: Error | null) => void): void {
    // A memory of its own, handed over rather than copied: a small Buffer shares Node's pool.
    const bytes = new Uint8Array(chunks.reduce((total, { chunk }) => total + chunk.length, 0));
    let offset = 0;
    for (const { chunk } of chunks) {
      bytes.set(chunk, offset);
      offset += chunk.length;
    }
    this.port.once('message', () => callback());
    this.port.postMessage({ type: 'chunk', chunk: bytes } satisfies ParquetWorkerMessage, [
      bytes.buffer,
    ]);
  }
}

async function main(port: MessagePort, job: ParquetJob): Promise<void> {
  const rows = await encodeParquet(job.platform, job.jsonlPath, new ToParent(port), job.metadata);
  port.postMessage({ type: 'done', rows } satisfies ParquetWorkerMessage);
}

if (parentPort) void main(parentPort, workerData as ParquetJob);
