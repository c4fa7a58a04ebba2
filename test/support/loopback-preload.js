// Loaded with `node --require` into the processes the tests start (./app-process.ts): installs
// the loopback guard (./loopback-guard.ts) there too, and reports each refusal on stderr as a
// line starting with CHILD_REFUSAL_LINE, which the starting test adds to its own refusals.
// Plain JavaScript, for a process that runs compiled code: the guard's TypeScript is compiled
// here, in memory, by the project's own compiler, and the .ts hook removed again afterwards.
'use strict';
const { readFileSync } = require('node:fs');
const { join } = require('node:path');
const ts = require('typescript');

const previous = require.extensions['.ts'];
require.extensions['.ts'] = (module, filename) => {
  const { outputText } = ts.transpileModule(readFileSync(filename, 'utf8'), {
    fileName: filename,
    compilerOptions: {
      module: ts.ModuleKind.CommonJS,
      target: ts.ScriptTarget.ES2022,
      esModuleInterop: true,
    },
  });
  module._compile(outputText, filename);
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
