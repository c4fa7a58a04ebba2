import { spawn } from 'node:child_process';
import { chmodSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

// npm runs a script in `sh -c`, and passes a SIGTERM to that shell only. Unless the shell
// replaces itself with node (`exec`), node never hears it: npm exited and the gateway kept
// running, undrained, under PID 1 (an operator audit). Here a stand-in `node` says its PID:
// it must be the shell's own.
describe('the scripts that run the service', () => {
  const scripts = (
    JSON.parse(readFileSync(join(__dirname, '..', 'package.json'), 'utf8')) as {
      scripts: Record<string, string>;
    }
  ).scripts;
  let bin: string;

  beforeAll(() => {
    bin = mkdtempSync(join(tmpdir(), 'gateway-scripts-'));
    writeFileSync(join(bin, 'node'), '#!/bin/sh\necho "$$"\n');
    chmodSync(join(bin, 'node'), 0o755);
  });
  afterAll(() => rmSync(bin, { recursive: true, force: true }));

  it.each(['start', 'start:prod'])('%s runs node in the shell npm signals', async (name) => {
    const child = spawn('sh', ['-c', scripts[name]], {
      env: { PATH: `${bin}:${process.env.PATH}` },
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    await new Promise((done) => child.once('close', done));
    expect(Number(output.trim())).toBe(child.pid);
  });
});
