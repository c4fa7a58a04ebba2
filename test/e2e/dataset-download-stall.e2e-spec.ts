import { createHash } from 'node:crypto';
import { once } from 'node:events';
import { mkdtempSync, readdirSync, readlinkSync, rmSync, writeFileSync } from 'node:fs';
import type { Server } from 'node:http';
import { connect, Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Logger } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { Clock } from '../../src/common/clock/clock';
import { within } from '../../src/common/within';
import { PARQUET_VERSION } from '../../src/modules/tasks/dataset-parquet';
import { datasetPath } from '../../src/modules/tasks/dataset-path';
import { TaskLifecycleService } from '../../src/modules/tasks/task-lifecycle.service';
import { createDatabase, dropDatabase, scratchDatabaseName } from '../support/database';
import { startTestNetwork, TestNetwork } from '../support/network';
import { registerTask } from '../support/tasks';
import { startTestApp, TEST_MASTER_KEY, TestApp } from '../support/test-app';
import { until } from '../support/until';

// A dataset download whose client stops reading, its connection left open, held the file's
// descriptor, its stream and the socket for good (a load and memory review's finding).

const DAY = 24 * 3600 * 1000;
const STALL_MS = 1000;
/** Far more than the sockets' buffers hold ahead of a client that reads nothing. */
const LARGE = 32 * 1024 * 1024;
const FORMATS = ['jsonl', 'parquet'] as const;
type Format = (typeof FORMATS)[number];

/** Whether this process (the app's) holds `file` open. */
function holdsOpen(file: string): boolean {
  return readdirSync('/proc/self/fd').some((fd) => {
    try {
      return readlinkSync(join('/proc/self/fd', fd)) === file;
    } catch {
      return false; // closed since it was listed
    }
  });
}

describe('A dataset download whose client stops reading', () => {
  let network: TestNetwork;
  let dataDir: string;
  let databaseName: string;
  let app: TestApp;
  const files = {} as Record<Format, string>;
  const clients: Socket[] = [];

  beforeAll(async () => {
    network = await startTestNetwork(3);
    dataDir = mkdtempSync(join(tmpdir(), 'gateway-download-stall-'));
    databaseName = scratchDatabaseName('download-stall');
    const databaseUrl = await createDatabase(process.env.TEST_RUN_SERVER_URL!, databaseName);
    app = await startTestApp({
      ...network.env,
      DATABASE_URL: databaseUrl,
      DATA_DIR: dataDir,
      DOWNLOAD_STALL_TIMEOUT_MS: String(STALL_MS),
    });
    await registerTask(app.app, '5ValidatorHotkeyForDatasets', 'stall-x', '#bitcoin', 'x');
    const lifecycle = app.app.get(TaskLifecycleService);
    await lifecycle.runOnce();
    app.app.get(Clock).advance(7 * DAY);
    expect(await lifecycle.runOnce()).toMatchObject({ compiled: 1 });
    // The Parquet file is written at its first download.
    await app.http
      .get('/api/v1/tasks/stall-x/dataset?format=parquet')
      .set('X-API-Key', TEST_MASTER_KEY)
      .expect(200);
    // Both files made large, and recorded so: their sizes and their hashes (a download checks
    // the bytes it sends: recordedBytes), not what is in them.
    files.jsonl = datasetPath(dataDir, 'stall-x');
    files.parquet = files.jsonl.replace(/\.jsonl\.gz$/, '.parquet');
    const large = Buffer.alloc(LARGE, 1);
    for (const file of Object.values(files)) writeFileSync(file, large);
    const database = app.app.get(DataSource);
    // In two statements: a new parquet_sha256 with the version unchanged is taken for an older
    // writer's file, and the version forgotten (migration ParquetVersionGuard).
    await database.query(
      `UPDATE scraping_tasks SET dataset_bytes = $1, parquet_bytes = $1, dataset_sha256 = $2,
       parquet_sha256 = $2, parquet_version = NULL WHERE id = 'stall-x'`,
      [LARGE, createHash('sha256').update(large).digest('hex')],
    );
    await database.query(`UPDATE scraping_tasks SET parquet_version = $1 WHERE id = 'stall-x'`, [
      PARQUET_VERSION,
    ]);
  }, 120_000);

  afterEach(() => {
    for (const client of clients.splice(0)) client.destroy();
  });

  afterAll(async () => {
    await app?.close();
    await network?.stop();
    await dropDatabase(process.env.TEST_RUN_SERVER_URL!, databaseName);
    rmSync(dataDir, { recursive: true, force: true });
  }, 60_000);

  /**
   * Sends a download's request on a connection of its own, reading nothing of the answer, and
   * the server's end of that connection.
   */
  async function request(format: Format) {
    const server: Server = app.app.getHttpServer();
    const accepted = once(server, 'connection') as Promise<[Socket]>;
    const client = connect(Number(new URL(app.url).port), '127.0.0.1');
    clients.push(client);
    // The server's close may reach it as a reset.
    client.on('error', () => undefined);
    await once(client, 'connect');
    const [serverSide] = await accepted;
    expect(serverSide.remotePort).toBe(client.localPort);
    const serverClosed = once(serverSide, 'close').then(() => Date.now());
    client.write(
      `GET /api/v1/tasks/stall-x/dataset?format=${format} HTTP/1.1\r\nHost: localhost\r\n` +
        `X-API-Key: ${TEST_MASTER_KEY}\r\n\r\n`,
    );
    // Opened once the request is answered: from then on the file is being sent.
    await until(async () => holdsOpen(files[format]) || undefined, 10_000, 10);
    return { client, serverClosed, opened: Date.now(), serverSide };
  }

  it.each(FORMATS)(
    'closes the %s file and the connection once the client has read nothing for DOWNLOAD_STALL_TIMEOUT_MS, and says so',
    async (format) => {
      const warned = jest.spyOn(Logger.prototype, 'warn');
      try {
        const { serverClosed, opened, serverSide } = await request(format);
        // When the server's side last made progress: a byte handed to its socket, or one its
        // buffer passed on. Node's socket timeout closed a stall after up to twice the setting
        // (an HTTP audit), which the bound below refuses.
        let progress = '';
        let progressAt = Date.now();
        const watch = setInterval(() => {
          const now = `${serverSide.bytesWritten}:${serverSide.writableLength}`;
          if (now !== progress) [progress, progressAt] = [now, Date.now()];
        }, 10);
        void serverClosed.finally(() => clearInterval(watch));
        // Not at once: the sockets' buffers take their fill first, then the timer runs.
        const closedAt = await within(
          serverClosed,
          STALL_MS + 9000,
          () => new Error(`the connection was still open ${STALL_MS + 9000} ms after the file was`),
        );
        expect(closedAt - opened).toBeGreaterThanOrEqual(STALL_MS - 100);
        expect(closedAt - progressAt).toBeGreaterThanOrEqual(STALL_MS - 100);
        expect(closedAt - progressAt).toBeLessThan(STALL_MS * 1.5);
        await until(async () => !holdsOpen(files[format]) || undefined, 2000, 10);
        expect(warned).toHaveBeenCalledWith(
          { task_id: 'stall-x' },
          `task stall-x: ${format} download made no progress for ${STALL_MS} ms: connection closed`,
        );
      } finally {
        warned.mockRestore();
      }
    },
    30_000,
  );

  // Node restarts a socket's timer at each write it passes on, and a write waits for the one
  // before it to go out: a client that reads, however slowly, keeps its download.
  it('keeps a download whose client reads with pauses shorter than the stall timeout, to its end', async () => {
    const warned = jest.spyOn(Logger.prototype, 'warn');
    try {
      const { client, serverClosed } = await request('jsonl');
      let received = 0;
      client.on('data', (chunk: Buffer) => (received += chunk.length));
      // Pauses of 400 ms, each after 1 MiB more read, up to 8 while the file lasts: the socket
      // buffers take megabytes during each pause (4 MiB here), so a 32 MiB file may be over
      // after 6 (the loop waited for bytes that never came: the test's own fault, not a stall).
      let pauses = 0;
      while (pauses < 8 && received <= LARGE) {
        client.pause();
        await new Promise((resolve) => setTimeout(resolve, 400));
        pauses++;
        const goal = Math.min(received + 1024 * 1024, LARGE + 1);
        client.resume();
        await until(async () => received >= goal || undefined, 10_000, 5);
      }
      // Together over the stall timeout, or the download never outlived it.
      expect(pauses * 400).toBeGreaterThan(STALL_MS);
      client.resume();
      await until(async () => received > LARGE || undefined, 20_000, 20);
      expect(received).toBeGreaterThan(LARGE);
      expect(warned).not.toHaveBeenCalledWith(expect.stringContaining('made no progress'));
      // Complete, on a kept-alive connection: left open for the next request past the stall
      // timeout (the socket's timer is the keep-alive timeout's again).
      await expect(within(serverClosed, STALL_MS + 500)).rejects.toThrow(
        `no answer within ${STALL_MS + 500} ms`,
      );
    } finally {
      warned.mockRestore();
    }
  }, 60_000);
});
