import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { forEachLine } from '../../src/common/text-lines';
import { GUARDED_NODE_ARGS, takeChildRefusal } from './loopback-guard';
import { refusedConnections } from './loopback-only';

/** Runs `script` in a node process guarded as ./app-process.ts starts the service. */
function runGuarded(script: string): Promise<{ stdout: string[]; taken: string[]; pid: number }> {
  const child = spawn(process.execPath, [...GUARDED_NODE_ARGS, '-e', script], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const stdout: string[] = [];
  const taken: string[] = [];
  forEachLine(child.stdout, (line) => stdout.push(line));
  forEachLine(child.stderr, (line) => {
    const refusal = takeChildRefusal(line, child.pid);
    if (refusal) taken.push(refusal);
  });
  return new Promise((resolve, reject) => {
    child.once('error', reject);
    child.once('close', () => resolve({ stdout, taken, pid: child.pid! }));
  });
}

describe('A process the tests start', () => {
  afterEach(() => {
    // Taken back, so that this spec's own refusals do not fail it.
    refusedConnections.length = 0;
  });

  it('runs the loopback guard: refused, never dialled, and reported to the spec', async () => {
    const { stdout, taken, pid } = await runGuarded(`
      const net = require('node:net');
      const socket = net.connect({ host: '203.0.113.9', port: 8091 });
      console.log('connecting ' + socket.connecting);
      socket.on('error', (error) => console.log(error.message));
      require('node:dns').lookup('example.com', (error) => console.log('lookup ' + error.code));
    `);

    expect(stdout).toEqual(
      expect.arrayContaining([
        'connecting false',
        '203.0.113.9:8091: a test may connect to loopback only',
        'lookup ENOTFOUND',
      ]),
    );
    const expected = [`process ${pid}: 203.0.113.9:8091`, `process ${pid}: example.com (lookup)`];
    expect(taken.sort()).toEqual(expected.sort());
    expect([...refusedConnections].sort()).toEqual(expected.sort());
  });

  it('goes on to loopback, and leaves the process to compile nothing more', async () => {
    const { stdout, taken } = await runGuarded(`
      const server = require('node:net').createServer((socket) => socket.end());
      server.listen(0, '127.0.0.1', () => {
        const socket = require('node:net').connect(server.address().port, '127.0.0.1');
        socket.on('connect', () => {
          console.log('connected');
          console.log('ts hook ' + (require.extensions['.ts'] === undefined ? 'gone' : 'left'));
          socket.destroy();
          server.close();
        });
      });
    `);
    expect(stdout).toEqual(['connected', 'ts hook gone']);
    expect(taken).toEqual([]);
  });

  it('stops when the process that started it dies without stopping it, signalled once', async () => {
    // The child counts its SIGTERMs into a file and takes 2.5 s to stop, as a draining service;
    // it says it has started (the guard has read its parent's pid) in another file.
    const signals = join(mkdtempSync(join(tmpdir(), 'preload-')), 'signals');
    const started = `${signals}.started`;
    const childScript =
      `let count = 0; process.on("SIGTERM", () => { count += 1; ` +
      `require("node:fs").writeFileSync(${JSON.stringify(signals)}, String(count)); ` +
      `setTimeout(() => process.exit(0), 2500); }); setInterval(() => {}, 1000); ` +
      `require("node:fs").writeFileSync(${JSON.stringify(started)}, "")`;
    // A parent that starts a guarded child running for good, prints its pid, and dies.
    const parent = spawn(
      process.execPath,
      [
        '-e',
        `
        const { spawn } = require('node:child_process');
        const child = spawn(process.execPath, ${JSON.stringify([...GUARDED_NODE_ARGS])}.concat(
          ['-e', ${JSON.stringify(childScript)}]
        ), { stdio: 'ignore', detached: true });
        console.log(child.pid);
        // Until the child has started (and read its parent's pid): a fixed 1.5 s was not always
        // enough for a loaded machine to start it. At most 15 s.
        const deadline = Date.now() + 15000;
        const check = setInterval(() => {
          if (!require('node:fs').existsSync(${JSON.stringify(started)}) && Date.now() < deadline) return;
          clearInterval(check);
          process.exit(0);
        }, 20);
        `,
      ],
      { stdio: ['ignore', 'pipe', 'inherit'] },
    );
    const lines: string[] = [];
    forEachLine(parent.stdout, (line) => lines.push(line));
    await new Promise((resolve) => parent.once('close', resolve));
    const orphan = Number(lines[0]);
    expect(orphan).toBeGreaterThan(0);
    const alive = () => {
      try {
        process.kill(orphan, 0);
        return true;
      } catch {
        return false;
      }
    };
    const deadline = Date.now() + 8000;
    while (alive() && Date.now() < deadline) await new Promise((done) => setTimeout(done, 100));
    const survived = alive();
    if (survived) process.kill(orphan, 'SIGKILL');
    expect(survived).toBe(false);
    expect(readFileSync(signals, 'utf8')).toBe('1');
    rmSync(dirname(signals), { recursive: true, force: true });
  });
});
