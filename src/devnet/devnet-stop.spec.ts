import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { startDevnet } from './devnet';

const now = new Date('2024-06-01T00:00:00Z');

/** No timeout on purpose: only stop() may end these calls. */
function minerIndex(url: string): Promise<Response> {
  return fetch(`${url}/GetMinerIndex`, {
    method: 'POST',
    headers: { 'x-validator-hotkey': '5Validator' },
    body: '{}',
  });
}

describe('Devnet.stop', () => {
  const handles = (kind: string): number =>
    process.getActiveResourcesInfo().filter((name) => name === kind).length;

  /** libuv releases closed handles on a later loop turn, so give it a few. */
  async function settledHandles(kind: string, expected: number): Promise<number> {
    for (let attempt = 0; attempt < 50 && handles(kind) > expected; attempt++) {
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    return handles(kind);
  }

  it('closes servers, hanging connections and pending delays', async () => {
    const serversBefore = handles('TCPServerWrap');
    const socketsBefore = handles('TCPSocketWrap');
    const devnet = await startDevnet({
      miners: [{ behaviour: { hang: true } }, { behaviour: { latencyMs: 60_000 } }],
      seed: 3,
      now,
      corpusSize: { x: 50, reddit: 50 },
    });
    expect(handles('TCPServerWrap')).toBe(serversBefore + 2);
    // Settled into values right away, so that their rejections are never unhandled.
    const outcome = (call: Promise<Response>): Promise<string> =>
      call.then(
        (response) => `answered ${response.status}`,
        () => 'failed',
      );
    const hanging = outcome(minerIndex(devnet.miners[0].url));
    const delayed = outcome(minerIndex(devnet.miners[1].url));
    await new Promise((resolve) => setTimeout(resolve, 100));

    await devnet.stop();
    expect(await hanging).toBe('failed');
    expect(await delayed).toBe('failed');
    expect(await settledHandles('TCPServerWrap', serversBefore)).toBeLessThanOrEqual(serversBefore);
    // Other sockets of the test worker may close meanwhile; none of ours may remain.
    expect(await settledHandles('TCPSocketWrap', socketsBefore)).toBeLessThanOrEqual(socketsBefore);
    expect(await outcome(minerIndex(devnet.miners[0].url))).toBe('failed');
    await devnet.stop();
  });

  it('lets the process exit on its own', async () => {
    // A child process is the only honest check: it must end without being told to.
    const child = spawn(process.execPath, ['-e', childScript()], {
      cwd: join(__dirname, '..', '..'),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    const exitCode = await new Promise<number | null>((resolve) => {
      const timer = setTimeout(() => {
        child.kill('SIGKILL');
        resolve(null);
      }, 10_000);
      child.on('exit', (code) => {
        clearTimeout(timer);
        resolve(code);
      });
    });
    expect({ exitCode, output: output.trim() }).toEqual({ exitCode: 0, output: 'stopped' });
  });
});

/** Loads the TypeScript sources through `transpileModule`, starts faulty miners, calls, stops. */
function childScript(): string {
  return `
    const ts = require('typescript');
    const fs = require('node:fs');
    require.extensions['.ts'] = (module, filename) => {
      const options = { module: ts.ModuleKind.CommonJS, target: ts.ScriptTarget.ES2022, esModuleInterop: true };
      const output = ts.transpileModule(fs.readFileSync(filename, 'utf8'), { compilerOptions: options, fileName: filename });
      module._compile(output.outputText, filename);
    };
    const { startDevnet } = require(${JSON.stringify(join(__dirname, 'devnet.ts'))});
    (async () => {
      const devnet = await startDevnet({
        miners: [{ behaviour: { hang: true } }, { behaviour: { latencyMs: 60000 } }, { behaviour: { oversize: true } }],
        corpusSize: { x: 50, reddit: 50 },
      });
      for (const miner of devnet.miners) {
        fetch(miner.url + '/GetMinerIndex', { method: 'POST', headers: { 'x-validator-hotkey': 'v' }, body: '{}' })
          .then((response) => response.body.getReader().read())
          .catch(() => undefined);
      }
      await new Promise((resolve) => setTimeout(resolve, 300));
      await devnet.stop();
      process.stdout.write('stopped');
    })();
  `;
}
