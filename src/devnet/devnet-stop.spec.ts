import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { Sr25519Keypair } from '../network/bittensor/keypair';
import { until } from '../../test/support/until';
import { AxonAnswer, callAxon } from './axon-client';
import { DevnetMiner, startDevnet } from './devnet';

const now = new Date('2024-06-01T00:00:00Z');
const gateway = Sr25519Keypair.fromUri('//Gateway');

/** A signal that never aborts, on purpose: only stop() may end these calls. */
function minerIndex(miner: DevnetMiner): Promise<AxonAnswer> {
  return callAxon({
    url: miner.url,
    hotkey: miner.hotkey,
    synapse: 'GetMinerIndex',
    fields: { version: 4 },
    signer: gateway,
    signal: new AbortController().signal,
  });
}

describe('Devnet.stop', () => {
  const handles = (kind: string): number =>
    process.getActiveResourcesInfo().filter((name) => name === kind).length;

  /**
   * libuv releases closed handles on a later loop turn, so give it a few: up to `waitMs` (a
   * loaded machine's worst case where the test expects them gone).
   */
  async function settledHandles(kind: string, expected: number, waitMs = 500): Promise<number> {
    await until(() => Promise.resolve(handles(kind) <= expected || undefined), waitMs, 10).catch(
      () => undefined,
    );
    return handles(kind);
  }

  it('closes servers, hanging connections and pending delays', async () => {
    // Test files run before this one in the worker may still be releasing theirs.
    const serversBefore = await settledHandles('TCPServerWrap', 0);
    const socketsBefore = await settledHandles('TCPSocketWrap', 0);
    const devnet = await startDevnet({
      miners: [{ behaviour: { hang: true } }, { behaviour: { latencyMs: 60_000 } }],
      seed: 3,
      now,
      validatorHotkeys: [gateway.address],
      corpusSize: { x: 50, reddit: 50 },
    });
    expect(handles('TCPServerWrap')).toBe(serversBefore + 2);
    // Settled into values right away, so that their rejections are never unhandled.
    const outcome = (call: Promise<AxonAnswer>): Promise<string> =>
      call.then(
        (answer) => `answered ${answer.status}`,
        () => 'failed',
      );
    const hanging = outcome(minerIndex(devnet.miners[0]));
    const delayed = outcome(minerIndex(devnet.miners[1]));
    // Both calls are at their miners (one hanging, one in its delay) before the stop: else it
    // would only refuse connections, and show nothing about the ones in progress.
    await until(
      async () => devnet.miners.every(({ uid }) => devnet.calls(uid).length > 0) || undefined,
      5000,
      10,
    );

    await devnet.stop();
    expect(await hanging).toBe('failed');
    expect(await delayed).toBe('failed');
    expect(await settledHandles('TCPServerWrap', serversBefore, 5000)).toBeLessThanOrEqual(
      serversBefore,
    );
    // Other sockets of the test worker may close meanwhile; none of ours may remain.
    expect(await settledHandles('TCPSocketWrap', socketsBefore, 5000)).toBeLessThanOrEqual(
      socketsBefore,
    );
    expect(await outcome(minerIndex(devnet.miners[0]))).toBe('failed');
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
      // Loading the sources takes 5 s on a loaded machine, and over 10 s was seen in CI.
      const timer = setTimeout(() => {
        child.kill('SIGKILL');
        resolve(null);
      }, 30_000);
      child.on('exit', (code) => {
        clearTimeout(timer);
        resolve(code);
      });
    });
    // Only the oversize miner answered (200, then a body that never ends); the others held on.
    expect({ exitCode, output: output.trim() }).toEqual({ exitCode: 0, output: 'stopped [200]' });
  }, 40_000);
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
    const { buildSignedRequest, newTerminal } = require(${JSON.stringify(join(__dirname, '..', 'network', 'bittensor', 'dendrite.ts'))});
    const { Sr25519Keypair } = require(${JSON.stringify(join(__dirname, '..', 'network', 'bittensor', 'keypair.ts'))});
    (async () => {
      const gateway = Sr25519Keypair.fromUri('//Gateway');
      const devnet = await startDevnet({
        miners: [{ behaviour: { hang: true } }, { behaviour: { latencyMs: 60000 } }, { behaviour: { oversize: true } }],
        validatorHotkeys: [gateway.address],
        corpusSize: { x: 50, reddit: 50 },
      });
      const statuses = [];
      for (const miner of devnet.miners) {
        const { hostname, port } = new URL(miner.url);
        const axon = { ip: hostname, port: Number(port), hotkey: miner.hotkey };
        const terminal = newTerminal(gateway.address, Date.now());
        const request = buildSignedRequest('GetMinerIndex', { version: 4 }, 12, axon, terminal, (text) => gateway.sign(text));
        // Reads one chunk and then nothing: the oversize miner is left blocked on a full socket.
        fetch(request.url, { method: 'POST', headers: request.headers, body: request.body })
          .then((response) => statuses.push(response.status) && response.body.getReader().read())
          .catch(() => undefined);
      }
      // Until the oversize miner's answer has begun and every miner has its call (up to 15 s on
      // a loaded machine): a fixed wait could stop the devnet before any of them.
      const deadline = Date.now() + 15000;
      while (
        !(statuses.length > 0 && devnet.miners.every((miner) => devnet.calls(miner.uid).length > 0)) &&
        Date.now() < deadline
      )
        await new Promise((resolve) => setTimeout(resolve, 20));
      await devnet.stop();
      process.stdout.write('stopped ' + JSON.stringify(statuses));
    })();
  `;
}
