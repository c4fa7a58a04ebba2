import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import * as ts from 'typescript';
import { exitAtOnceWhenDone } from './worker-exit';

/** worker-exit.ts as plain JavaScript, for a child process to load (it imports nothing). */
const compiled = ts.transpileModule(readFileSync(join(__dirname, 'worker-exit.ts'), 'utf8'), {
  compilerOptions: { module: ts.ModuleKind.CommonJS, target: ts.ScriptTarget.ES2022 },
}).outputText;

/** Runs `body` in a child Node with `exitAtOnceWhenDone` in scope. */
function runChild(body: string): { status: number | null; stdout: string; stderr: string } {
  const script = `const loaded = { exports: {} };
(function (module, exports) { ${compiled} })(loaded, loaded.exports);
const { exitAtOnceWhenDone } = loaded.exports;
${body}`;
  const run = spawnSync(process.execPath, ['-e', script], { encoding: 'utf8', timeout: 10_000 });
  return { status: run.status, stdout: run.stdout, stderr: run.stderr };
}

describe(exitAtOnceWhenDone.name, () => {
  it('keeps the exit code, and lets every exit listener registered before its last call run', () => {
    const run = runChild(`
      process.on('exit', () => console.log('before'));
      exitAtOnceWhenDone();
      process.on('exit', () => console.log('after the first call'));
      exitAtOnceWhenDone();
      process.exitCode = 3;
    `);

    expect(run.stderr).toBe('');
    expect(run.stdout.trim().split('\n')).toEqual(['before', 'after the first call']);
    expect(run.status).toBe(3);
  });

  it('waits for the event loop to empty: a running timer still holds the process', () => {
    const run = runChild(`
      exitAtOnceWhenDone();
      setTimeout(() => console.log('timer ran'), 100);
    `);

    expect(run.stdout.trim()).toBe('timer ran');
    expect(run.status).toBe(0);
  });
});
