// The test suite on the Node the Docker image runs (the Dockerfile's `FROM node:<major>`), where
// CI and this machine run an older one. Node changes behaviour between majors (Node 24's
// readline ends lines at U+2028, which cut dataset items in two; its own WebSocket replaces the
// `ws` package under the chain client), and only a run on that Node shows it: docs/decisions.md,
// "Supported Node versions".
//
//   node test/image-runtime.js [jest arguments]    the suite (or the given files and options)
//   node test/image-runtime.js --if-other-node …   the same, but nothing when this process is
//                                                  already on the image's major: `npm test` runs
//                                                  the unit tier this way before every tier runs
//                                                  on the machine's Node
//
// The binary is IMAGE_NODE when set (a path to a `node`), else the latest release of that major
// from the npm registry (the `node-<platform>-<arch>` package: the image's `node:<major>` tag
// floats the same way), kept under node_modules/.cache/image-node/. Not a test: the only part of
// `npm test` that reaches the registry, once per checkout, as `npm ci` does; the tests it runs
// stay on loopback as always.
'use strict';
const { execFileSync, spawnSync } = require('node:child_process');
const { existsSync, mkdirSync, readFileSync, renameSync, rmSync } = require('node:fs');
const { dirname, join } = require('node:path');

const ROOT = join(__dirname, '..');
const IF_OTHER_NODE = '--if-other-node';

function imageMajor() {
  const from = /^FROM node:(\d+)/m.exec(readFileSync(join(ROOT, 'Dockerfile'), 'utf8'));
  if (!from) throw new Error('the Dockerfile names no node image (FROM node:<major>)');
  return from[1];
}

/** The image's Node from the registry, fetched once into the cache. */
function registryNode(major) {
  const name = `node-${process.platform}-${process.arch}`;
  if (process.platform !== 'linux' && process.platform !== 'darwin')
    throw new Error(
      `no registry package for ${process.platform}; set IMAGE_NODE to a Node ${major} binary`,
    );
  const dir = join(ROOT, 'node_modules', '.cache', 'image-node', major);
  const binary = join(dir, 'package', 'bin', 'node');
  if (existsSync(binary)) return binary;
  // Fetched and unpacked beside the cache, then moved in whole: a run stopped half-way leaves
  // no half a binary for the next one to take.
  const fetching = `${dir}.fetching`;
  rmSync(fetching, { recursive: true, force: true });
  mkdirSync(fetching, { recursive: true });
  process.stderr.write(`fetching Node ${major} (${name}@${major}) from the npm registry…\n`);
  let tarball;
  try {
    tarball = execFileSync('npm', ['pack', `${name}@${major}`, '--loglevel=error'], {
      cwd: fetching,
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'inherit'],
    }).trim();
  } catch {
    throw new Error(
      `could not fetch ${name}@${major} from the npm registry (above); ` +
        `set IMAGE_NODE to a Node ${major} binary, or run the tests on Node ${major}`,
    );
  }
  execFileSync('tar', ['-xzf', tarball], { cwd: fetching });
  rmSync(join(fetching, tarball));
  rmSync(dir, { recursive: true, force: true });
  renameSync(fetching, dir);
  return binary;
}

function main() {
  const major = imageMajor();
  const args = process.argv.slice(2);
  const ifOtherNode = args[0] === IF_OTHER_NODE;
  const jestArgs = ifOtherNode ? args.slice(1) : args;
  const onImageMajor = process.versions.node.split('.')[0] === major;
  if (ifOtherNode && onImageMajor && !process.env.IMAGE_NODE) {
    process.stderr.write(
      `Node ${process.version} is the image's major: the tiers run on it once\n`,
    );
    return 0;
  }
  const node = process.env.IMAGE_NODE || (onImageMajor ? process.execPath : registryNode(major));
  const version = execFileSync(node, ['--version'], { encoding: 'utf8' }).trim();
  if (!version.startsWith(`v${major}.`))
    throw new Error(`${node} is Node ${version}, the image runs Node ${major}`);
  const instead = node === process.execPath ? '' : `, not ${process.version}`;
  process.stderr.write(`running the tests on Node ${version} (the image's)${instead}\n`);
  // First on PATH too: what the tests start (`process.execPath`, `node`) runs on it as well.
  const result = spawnSync(
    node,
    [join(ROOT, 'node_modules', 'jest', 'bin', 'jest.js'), ...jestArgs],
    {
      cwd: ROOT,
      stdio: 'inherit',
      env: { ...process.env, PATH: `${dirname(node)}:${process.env.PATH}` },
    },
  );
  return result.status ?? 1;
}

try {
  process.exitCode = main();
} catch (error) {
  process.stderr.write(`image-runtime: ${error.message}\n`);
  process.exitCode = 1;
}
