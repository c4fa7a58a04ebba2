// Loaded with `node --require` into the processes the tests start (./app-process.ts): installs
// the loopback guard (./loopback-guard.ts) there too, and reports each refusal on stderr as a
// line starting with CHILD_REFUSAL_LINE, which the starting test adds to its own refusals.
// Plain JavaScript, for a process that runs compiled code: the guard's TypeScript is compiled
// here by the project's own compiler, and the .ts hook removed again afterwards. The output is
// kept in the temporary directory under the source's digest: loading the compiler cost every
// started process about 0.4 s and 60 MB, so only the first process after a change pays it.
'use strict';
const { createHash } = require('node:crypto');
const { mkdirSync, readFileSync, renameSync, writeFileSync } = require('node:fs');
const { tmpdir } = require('node:os');
const { join } = require('node:path');

const CACHE = join(tmpdir(), 'validator-gateway-loopback-guard');

function compiled(source, filename) {
  const cached = join(CACHE, `${createHash('sha256').update(source).digest('hex')}.js`);
  try {
    return readFileSync(cached, 'utf8');
  } catch {
    const ts = require('typescript');
    const { outputText } = ts.transpileModule(source, {
      fileName: filename,
      compilerOptions: {
        module: ts.ModuleKind.CommonJS,
        target: ts.ScriptTarget.ES2022,
        esModuleInterop: true,
      },
    });
    // Written whole, then renamed: processes starting together never read half a file.
    mkdirSync(CACHE, { recursive: true });
    const partial = `${cached}.${process.pid}`;
    writeFileSync(partial, outputText);
    renameSync(partial, cached);
    return outputText;
  }
}

const previous = require.extensions['.ts'];
require.extensions['.ts'] = (module, filename) => {
  module._compile(compiled(readFileSync(filename, 'utf8'), filename), filename);
};
try {
  const guard = require(join(__dirname, 'loopback-guard.ts'));
  guard.installLoopbackGuard((what) =>
    process.stderr.write(`${guard.CHILD_REFUSAL_LINE}${what}\n`),
  );
} finally {
  if (previous) require.extensions['.ts'] = previous;
  else delete require.extensions['.ts'];
}

// A test that dies without its cleanup (jest killed, a run cut off by a timeout) must not leave
// its processes running, with their embedded Postgres: when the parent goes, this process is
// given to another (its parent pid changes), and stops itself as SIGTERM would stop it.
// Once: a second SIGTERM makes the service exit without waiting for what is in flight.
const parent = process.ppid;
const watch = setInterval(() => {
  if (process.ppid === parent) return;
  clearInterval(watch);
  process.kill(process.pid, 'SIGTERM');
}, 1000).unref();
