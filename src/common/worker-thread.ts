import { createRequire } from 'node:module';
import { extname } from 'node:path';
import { Worker } from 'node:worker_threads';

const requireFromHere = createRequire(__filename);

/**
 * Starts a worker thread running `file`, a module named by its path without the extension
 * (`join(__dirname, 'parquet-worker')`), with `workerData`. Built, the module is a `.js` file, as
 * this one is (`dist/`). Under jest this file runs from its `.ts` source, and so would the
 * module, which a worker cannot load (jest's transform does not reach other threads, and Node 20
 * runs no TypeScript): the worker then compiles the `.ts` files it requires with the TypeScript
 * compiler, a dev dependency, looked up only in that case. Tests only: about a second more per
 * worker.
 */
export function startWorker(file: string, workerData: unknown): Worker {
  const extension = extname(__filename);
  if (extension !== '.ts') return new Worker(`${file}${extension}`, { workerData });
  const typescript = requireFromHere.resolve('typescript');
  return new Worker(fromSource(typescript, `${file}.ts`), { eval: true, workerData });
}

/**
 * A worker's code that loads `entry`, a `.ts` file, and the `.ts` files it requires, compiled by
 * the TypeScript compiler. Each compiled file is kept under the system's temporary directory by
 * the hash of its source, so that only a worker meeting a changed file loads the compiler (1.5 s).
 */
function fromSource(typescript: string, entry: string): string {
  return `
    const { createHash } = require('node:crypto');
    const { mkdirSync, readFileSync, renameSync, writeFileSync } = require('node:fs');
    const { tmpdir } = require('node:os');
    const { join } = require('node:path');
    const cache = join(tmpdir(), 'gateway-worker-ts');
    let ts;
    const compile = (source, fileName) => {
      ts ??= require(${JSON.stringify(typescript)});
      const compilerOptions = {
        module: ts.ModuleKind.CommonJS,
        target: ts.ScriptTarget.ES2022,
        esModuleInterop: true,
        experimentalDecorators: true,
        emitDecoratorMetadata: true,
      };
      return ts.transpileModule(source, { compilerOptions, fileName }).outputText;
    };
    require.extensions['.ts'] = (module, filename) => {
      const source = readFileSync(filename, 'utf8');
      const key = createHash('sha256').update(${JSON.stringify(typescript)}).update(source).digest('hex');
      const compiled = join(cache, key + '.js');
      let code;
      try {
        code = readFileSync(compiled, 'utf8');
      } catch {
        code = compile(source, filename);
        mkdirSync(cache, { recursive: true });
        const partial = compiled + '.' + process.pid + '.' + require('node:worker_threads').threadId;
        writeFileSync(partial, code);
        renameSync(partial, compiled);
      }
      module._compile(code, filename);
    };
    require(${JSON.stringify(entry)});
  `;
}
