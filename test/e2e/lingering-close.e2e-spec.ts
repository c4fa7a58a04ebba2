import { once } from 'node:events';
import type { Server } from 'node:http';
import { connect, Socket } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { LINGER_BYTES } from '../../src/common/http/lingering-close';
import { parse } from '../support/raw-http';
import { startTestApp, TEST_MASTER_KEY, TestApp } from '../support/test-app';

/** Over the tests' BODY_LIMIT (1 MB), under what the server reads after its answer. */
const BODY_BYTES = 2 * 1024 * 1024;
/** What a client writes at a time. */
const PIECE_BYTES = 64 * 1024;

/**
 * A connection answered `Connection: close` before its body was read: the server closed it while
 * the client was still sending, with bytes unread, so the kernel reset it, and the reset often
 * wiped out the answer before the client read it (a fuzz audit's finding: clients that send no
 * `Expect: 100-continue`, Node's fetch, Python's, saw EPIPE or ECONNRESET, not the 413).
 */
describe('A connection closed with a body unread', () => {
  let app: TestApp;
  let port: number;

  beforeAll(async () => {
    app = await startTestApp();
    port = Number(new URL(app.url).port);
  });
  afterAll(() => app.close());

  const head = (method: string, path: string, length: number) =>
    `${method} ${path} HTTP/1.1\r\nHost: x\r\nX-API-Key: ${TEST_MASTER_KEY}\r\n` +
    `Content-Type: application/json\r\nContent-Length: ${length}\r\n\r\n`;

  /**
   * Sends the head, then the body 64 KB at a time, each piece once the last is out, as a client
   * on a network uploads it, before reading anything (as Python's http.client does); then reads
   * until the server closes: what it answered, or the error that cut the upload or the answer off.
   */
  const uploadThenRead = async (requestHead: string, body: Buffer): Promise<string> => {
    const socket = connect(port, '127.0.0.1');
    socket.pause();
    const chunks: Buffer[] = [];
    socket.on('data', (chunk: Buffer) => chunks.push(chunk));
    let failed: NodeJS.ErrnoException | undefined;
    const closed = new Promise<void>((resolve) => {
      socket.on('error', (error: NodeJS.ErrnoException) => (failed ??= error));
      socket.on('close', () => resolve());
    });
    const send = (bytes: Buffer | string) =>
      new Promise<void>((resolve) => socket.write(bytes, () => resolve()));
    try {
      await once(socket, 'connect');
      await send(requestHead);
      for (let at = 0; at < body.length && !failed; at += PIECE_BYTES) {
        await send(body.subarray(at, at + PIECE_BYTES));
        await sleep(1);
      }
      socket.resume();
      await closed;
      return failed ? `error ${failed.code}` : Buffer.concat(chunks).toString('utf8');
    } finally {
      socket.destroy();
    }
  };

  it.each([
    // Refused unread over BODY_LIMIT.
    { method: 'POST', path: '/api/v1/keys', status: 413 },
    // A body no operation of a GET reads.
    { method: 'GET', path: '/api/v1/health', status: 200 },
  ])(
    'lets a client that sends a whole body without Expect read the answer to a $method, 20 times in 20',
    async ({ method, path, status }) => {
      const body = Buffer.from(JSON.stringify({ name: 'a'.repeat(BODY_BYTES) }));
      const answers: string[] = [];
      for (let i = 0; i < 20; i += 1) {
        const answer = await uploadThenRead(head(method, path, body.length), body);
        answers.push(/^HTTP\/1\.1 \d{3}/.exec(answer)?.[0] ?? answer.slice(0, 40));
      }
      expect(answers).toEqual(Array(20).fill(`HTTP/1.1 ${status}`));
    },
  );

  it('still reads no more than LINGER_BYTES of a body it refused', async () => {
    const server: Server = app.app.getHttpServer();
    const accepted = once(server, 'connection') as Promise<[Socket]>;
    // Kept writing after the server's end of the connection, as a client busy uploading does.
    const socket = connect({ port, host: '127.0.0.1', allowHalfOpen: true });
    let open = true;
    const ended = new Promise<void>((resolve) => {
      socket.on('error', () => resolve());
      socket.on('close', () => resolve());
    }).then(() => (open = false));
    let answered = '';
    socket.on('data', (chunk: Buffer) => (answered += chunk.toString('utf8')));
    await once(socket, 'connect');
    const [serverSide] = await accepted;
    const serverClosed = new Promise((done) => serverSide.once('close', done));
    socket.write(head('POST', '/api/v1/keys', 1024 * 1024 * 1024));
    // As fast as the connection takes it: without a bound on bytes, the 2 s would read GBs.
    const zeros = Buffer.alloc(PIECE_BYTES);
    while (open && socket.bytesWritten < 1024 * 1024 * 1024) {
      if (!socket.write(zeros))
        await Promise.race([new Promise((go) => socket.once('drain', go)), ended]);
    }
    await Promise.all([ended, serverClosed]);
    socket.destroy();
    expect(answered).toMatch(/^HTTP\/1\.1 413 /);
    // The bound, a piece read past it, and the head.
    expect(serverSide.bytesRead).toBeGreaterThan(LINGER_BYTES);
    expect(serverSide.bytesRead).toBeLessThan(LINGER_BYTES + 2 * PIECE_BYTES);
  });

  it('holds a connection whose client keeps sending, and never closes, for about 2 s', async () => {
    const socket = connect({ port, host: '127.0.0.1', allowHalfOpen: true });
    socket.on('error', () => undefined);
    let open = true;
    const closed = new Promise<void>((resolve) => socket.on('close', () => resolve()));
    void closed.then(() => (open = false));
    let answered = '';
    socket.on('data', (chunk: Buffer) => (answered += chunk.toString('utf8')));
    await once(socket, 'connect');
    const started = Date.now();
    socket.write(head('POST', '/api/v1/keys', BODY_BYTES));
    while (open && Date.now() - started < 8000) {
      socket.write('a'.repeat(1024));
      await sleep(50);
    }
    socket.destroy();
    expect(parse(answered)).toMatchObject({ status: 413, headers: { connection: 'close' } });
    expect(Date.now() - started).toBeGreaterThan(1500);
    expect(Date.now() - started).toBeLessThan(4000);
  });
});
