import { spawn } from 'node:child_process';
import { createServer, type Server } from 'node:net';
import { handlesLeftAfter, openHandles } from './open-handles';

describe('handlesLeftAfter (the test environment, after each spec file)', () => {
  let timers: NodeJS.Timeout[] = [];
  let servers: Server[] = [];
  afterEach(async () => {
    timers.forEach(clearTimeout);
    timers = [];
    await Promise.all(servers.map((server) => new Promise((done) => server.close(done))));
    servers = [];
  });

  function listening(): Promise<Server> {
    const server = createServer();
    servers.push(server);
    return new Promise((done) => server.listen(0, '127.0.0.1', () => done(server)));
  }

  it('waits for a short timer to end', async () => {
    const before = openHandles();
    timers.push(setTimeout(() => undefined, 200));
    const started = performance.now();

    expect(await handlesLeftAfter(before, 2_000)).toEqual([]);
    expect(performance.now() - started).toBeGreaterThanOrEqual(150);
  });

  it('answers what is still open once the time is up, by kind', async () => {
    const before = openHandles();
    timers.push(
      setTimeout(() => undefined, 10_000),
      setInterval(() => undefined, 1_000),
    );
    await listening();
    const left = await handlesLeftAfter(before, 100);

    expect(left.sort()).toEqual(['1 listening server(s)', '2 timer(s)']);
  });

  it('waits for a server that is closing, and for a child process to end', async () => {
    const before = openHandles();
    const server = await listening();
    server.close();
    const child = spawn(process.execPath, ['-e', 'setTimeout(() => {}, 300)'], { stdio: 'ignore' });
    const ended = new Promise((done) => child.on('exit', done));

    // A Node process to start and end: 2 s was little on a loaded machine; waited for by polling.
    expect(await handlesLeftAfter(before, 10_000)).toEqual([]);
    await ended;
  });

  it('does not count what does not hold the process open', async () => {
    const before = openHandles();
    timers.push(setTimeout(() => undefined, 10_000).unref());
    (await listening()).unref();

    expect(await handlesLeftAfter(before, 100)).toEqual([]);
  });
});
