import { spawn, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import {
  chmodSync,
  copyFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';

const SCRIPT = join(__dirname, '..', 'image-runtime.js');
const MACHINE_MAJOR = process.versions.node.split('.')[0];

/**
 * A project holding the runner, a Dockerfile on `imageMajor` and a place for a stand-in jest;
 * `record` is where the stand-ins write down what ran.
 */
function standInProject(imageMajor: string): { project: string; record: string } {
  const project = mkdtempSync(join(tmpdir(), 'image-runtime-'));
  mkdirSync(join(project, 'test'));
  mkdirSync(join(project, 'node_modules', 'jest', 'bin'), { recursive: true });
  copyFileSync(SCRIPT, join(project, 'test', 'image-runtime.js'));
  writeFileSync(join(project, 'Dockerfile'), `FROM node:${imageMajor}-bookworm-slim\n`);
  return { project, record: join(project, 'record') };
}

/**
 * `npm test`'s runner in a project of its own: the Dockerfile names `imageMajor`, `npm run check`
 * and jest are stand-ins that write down that they ran (jest: on which Node, with which
 * arguments), and IMAGE_NODE (when given) a stand-in `node` reporting `imageVersion` that writes
 * down what it was asked to run.
 */
function runTests(options: {
  imageMajor: string;
  imageVersion?: string;
  args?: string[];
  machineTierFails?: boolean;
  imageRunFails?: boolean;
  checkFails?: boolean;
  /** test/image-node.json's content; with `registryVersion`, a stand-in `npm pack` serves it. */
  pin?: { version: string; integrity: Record<string, string> };
  /** The version of the `node` the stand-in registry's package holds (`npm pack` writes it). */
  registryVersion?: string;
  /** The pinned integrity is that of the stand-in registry's package (else it is `pin`'s). */
  pinTheRegistryPackage?: boolean;
}) {
  const { project, record } = standInProject(options.imageMajor);
  try {
    const check =
      "require('node:fs').appendFileSync(process.env.RECORD, 'check\\n');" +
      'process.exit(process.env.CHECK_FAILS ? 1 : 0)';
    writeFileSync(
      join(project, 'package.json'),
      JSON.stringify({ scripts: { check: `node -e "${check}"` } }),
    );
    writeFileSync(
      join(project, 'node_modules', 'jest', 'bin', 'jest.js'),
      "require('node:fs').appendFileSync(process.env.RECORD, " +
        "`jest on ${process.version}: ${process.argv.slice(2).join(' ')}\\n`);\n" +
        "console.log('the output of jest on', process.version);\n" +
        'process.exit(process.env.MACHINE_TIER_FAILS ? 1 : 0);\n',
    );
    const env: Record<string, string | undefined> = { ...process.env, RECORD: record };
    delete env.IMAGE_NODE;
    if (options.registryVersion) {
      const pin = options.pin ?? { version: options.registryVersion.slice(1), integrity: {} };
      const tarball = registryPackage(project, options.registryVersion);
      if (options.pinTheRegistryPackage) pin.integrity[PLATFORM] = integrityOf(tarball);
      writeFileSync(join(project, 'test', 'image-node.json'), JSON.stringify(pin));
      env.PATH = `${standInNpm(project, tarball)}:${process.env.PATH}`;
    }
    if (options.machineTierFails) env.MACHINE_TIER_FAILS = '1';
    if (options.checkFails) env.CHECK_FAILS = '1';
    if (options.imageRunFails) env.IMAGE_RUN_FAILS = '1';
    if (options.imageVersion) {
      const bin = join(project, 'image-bin');
      mkdirSync(bin);
      env.IMAGE_NODE = join(bin, 'node');
      writeFileSync(
        env.IMAGE_NODE,
        '#!/bin/sh\n' +
          `if [ "$1" = "--version" ]; then echo ${options.imageVersion}; exit 0; fi\n` +
          'echo "image node (PATH from ${PATH%%:*}): $*" >> "$RECORD"\n' +
          'if [ -n "$IMAGE_RUN_FAILS" ]; then exit 1; fi\n',
      );
      chmodSync(env.IMAGE_NODE, 0o755);
    }
    const run = spawnSync(
      process.execPath,
      [join(project, 'test', 'image-runtime.js'), ...(options.args ?? [])],
      { cwd: project, env, encoding: 'utf8', timeout: 30_000 },
    );
    const ran = existsSync(record) ? readFileSync(record, 'utf8').trim().split('\n') : [];
    const jest = join(project, 'node_modules', 'jest', 'bin', 'jest.js');
    return {
      status: run.status,
      stderr: run.stderr,
      ran: ran.map((line) =>
        line.replaceAll(jest, 'jest').replaceAll(project, '<project>').trimEnd(),
      ),
    };
  } finally {
    rmSync(project, { recursive: true, force: true });
  }
}

const PLATFORM = `${process.platform}-${process.arch}`;

/** A `node-<platform>` package as the registry holds one: `package/bin/node`, a stand-in. */
function registryPackage(project: string, version: string): string {
  const root = join(project, 'registry');
  mkdirSync(join(root, 'package', 'bin'), { recursive: true });
  const node = join(root, 'package', 'bin', 'node');
  writeFileSync(
    node,
    '#!/bin/sh\n' +
      `if [ "$1" = "--version" ]; then echo ${version}; exit 0; fi\n` +
      'echo "registry node: $*" >> "$RECORD"\n',
  );
  chmodSync(node, 0o755);
  spawnSync('tar', ['-czf', 'node.tgz', 'package'], { cwd: root });
  return join(root, 'node.tgz');
}

function integrityOf(file: string): string {
  return `sha512-${createHash('sha512').update(readFileSync(file)).digest('base64')}`;
}

/** A directory holding an `npm` whose `pack` writes `tarball` where it runs, and says so. */
function standInNpm(project: string, tarball: string): string {
  const bin = join(project, 'npm-bin');
  mkdirSync(bin);
  writeFileSync(
    join(bin, 'npm'),
    '#!/bin/sh\n' +
      'echo "npm $1 $2" >> "$RECORD"\n' +
      `cp ${tarball} ./fetched.tgz\n` +
      'echo fetched.tgz\n',
  );
  chmodSync(join(bin, 'npm'), 0o755);
  return bin;
}

describe("npm test's runner (test/image-runtime.js)", () => {
  // A major this process is not on, so that the image's Node is another one.
  const otherMajor = MACHINE_MAJOR === '24' ? '26' : '24';

  /** An image on `otherMajor`, its Node given by IMAGE_NODE. */
  const image = { imageMajor: otherMajor, imageVersion: `v${otherMajor}.9.9` };
  const machineTier = `jest on ${process.version}: --selectProjects unit --maxWorkers=1`;
  const imageRun = 'image node (PATH from <project>/image-bin): jest';

  it("runs npm run check, then every tier on the image's Node and beside it the unit tier on the machine's", () => {
    const run = runTests(image);
    expect(run.status).toBe(0);
    // The two runs start together: either may write down first.
    expect(run.ran[0]).toBe('check');
    expect(run.ran.slice(1).sort()).toEqual([imageRun, machineTier].sort());
    // The machine's run's output is held back, and written after the image's run.
    expect(run.stderr).toContain(
      `the unit tier on this machine's Node ${process.version}:\n` +
        `the output of jest on ${process.version}\n`,
    );
  });

  it("fails the run when the machine's unit tier fails, the image's tiers run all the same", () => {
    const run = runTests({ ...image, machineTierFails: true });
    expect(run.status).toBe(1);
    expect(run.ran.slice(1).sort()).toEqual([imageRun, machineTier].sort());
    expect(run.stderr).toContain(`the unit tier on this machine's Node ${process.version} failed`);
  });

  it("fails the run when the image's tiers fail, and still shows the machine's unit tier", () => {
    const run = runTests({ ...image, imageRunFails: true });
    expect(run.status).toBe(1);
    expect(run.stderr).toContain(`the output of jest on ${process.version}`);
    expect(run.stderr).toContain(`the tests on Node v${otherMajor}.9.9, the image's, failed`);
  });

  it('runs no test when npm run check fails', () => {
    const run = runTests({ ...image, checkFails: true });
    expect(run.status).toBe(1);
    expect(run.ran).toEqual(['check']);
  });

  it("runs the jest arguments given only, on the image's Node, without the check", () => {
    const run = runTests({ ...image, args: ['src/common/text-lines.spec.ts', '--verbose'] });
    expect(run.status).toBe(0);
    expect(run.ran).toEqual([
      'image node (PATH from <project>/image-bin): jest src/common/text-lines.spec.ts --verbose',
    ]);
  });

  it("runs the tiers once on a machine already on the image's major, fetching nothing", () => {
    const run = runTests({ imageMajor: MACHINE_MAJOR });
    expect(run.status).toBe(0);
    expect(run.ran).toEqual(['check', `jest on ${process.version}:`]);
    expect(run.stderr).not.toContain('fetching');
  });

  // The package is an individual's repackaging of Node: the latest of the major ran with the
  // tests' database access at each checkout (a dependency audit's finding). Pinned, with its
  // integrity, a package other than the one pinned is never run.
  describe('without IMAGE_NODE, the pinned Node from the registry', () => {
    const args = ['src/common/text-lines.spec.ts'];
    const version = `v${otherMajor}.1.2`;

    it('fetches the version pinned and runs the tests on it when its integrity is pinned', () => {
      const run = runTests({
        imageMajor: otherMajor,
        args,
        registryVersion: version,
        pinTheRegistryPackage: true,
      });
      expect(run.stderr).toContain(`fetching Node ${otherMajor}.1.2 (node-${PLATFORM})`);
      expect(run.ran).toEqual([
        `npm pack node-${PLATFORM}@${otherMajor}.1.2`,
        'registry node: jest src/common/text-lines.spec.ts',
      ]);
      expect(run.status).toBe(0);
    });

    it('runs nothing from a package whose integrity is not the one pinned', () => {
      const run = runTests({
        imageMajor: otherMajor,
        args,
        registryVersion: version,
        pin: { version: `${otherMajor}.1.2`, integrity: { [PLATFORM]: 'sha512-pinned' } },
      });
      expect(run.status).toBe(1);
      expect(run.ran).toEqual([`npm pack node-${PLATFORM}@${otherMajor}.1.2`]);
      expect(run.stderr).toContain(
        `node-${PLATFORM}@${otherMajor}.1.2 from the registry is not the package ` +
          'test/image-node.json pins',
      );
    });

    it("refuses a pin of another major than the Dockerfile's, fetching nothing", () => {
      const run = runTests({
        imageMajor: otherMajor,
        args,
        registryVersion: version,
        pin: { version: '23.0.0', integrity: {} },
      });
      expect(run.status).toBe(1);
      expect(run.ran).toEqual([]);
      expect(run.stderr).toContain(
        `test/image-node.json pins Node 23.0.0, the image runs Node ${otherMajor}`,
      );
    });

    it('refuses a platform the pin has no package for, fetching nothing', () => {
      const run = runTests({
        imageMajor: otherMajor,
        args,
        registryVersion: version,
        pin: { version: `${otherMajor}.1.2`, integrity: {} },
      });
      expect(run.status).toBe(1);
      expect(run.ran).toEqual([]);
      expect(run.stderr).toContain(`test/image-node.json pins no Node for ${PLATFORM}`);
    });
  });

  // A process manager, an IDE's stop button or `kill` of npm's pid signals this process alone:
  // jest went on unseen to its end, re-parented to pid 1 (a workflow audit).
  // SIGKILL: no handler hears it, and jest's group of its own no longer dies with npm's.
  it.each([
    ['passes a SIGTERM it is sent on to jest and its workers, and ends with it', 'SIGTERM', 143],
    ['stops jest and its workers when it is killed outright', 'SIGKILL', 'SIGKILL'],
  ] as const)('%s', async (_, signal, ending) => {
    const { project, record } = standInProject(MACHINE_MAJOR);
    try {
      // Each writes down that it started and that a SIGTERM stopped it; each ends by itself,
      // should the runner not pass the signal on.
      const stoppable = (who: string) =>
        "const { appendFileSync } = require('node:fs');\n" +
        `process.on('SIGTERM', () => { appendFileSync(process.env.RECORD, '${who} stopped\\n'); process.exit(143); });\n` +
        `appendFileSync(process.env.RECORD, '${who} started\\n');\n` +
        'setTimeout(() => process.exit(0), 30_000);\n';
      writeFileSync(join(project, 'worker.js'), stoppable('worker'));
      writeFileSync(
        join(project, 'node_modules', 'jest', 'bin', 'jest.js'),
        "require('node:child_process').spawn(process.execPath, ['worker.js'], { stdio: 'inherit' });\n" +
          stoppable('jest'),
      );
      const runner = spawn(
        process.execPath,
        [join(project, 'test', 'image-runtime.js'), 'src/common/text-lines.spec.ts'],
        { cwd: project, env: { ...process.env, RECORD: record }, stdio: 'ignore' },
      );
      const ended = new Promise<number | string | null>((resolve) =>
        runner.once('exit', (code, killedBy) => resolve(code ?? killedBy)),
      );
      const recorded = () =>
        (existsSync(record) ? readFileSync(record, 'utf8') : '').split('\n').filter(Boolean).sort();
      const waitFor = async (lines: number) => {
        for (let waited = 0; recorded().length < lines && waited < 20_000; waited += 50)
          await sleep(50);
      };
      await waitFor(2);
      runner.kill(signal);
      expect(await ended).toBe(ending);
      await waitFor(4);
      expect(recorded()).toEqual([
        'jest started',
        'jest stopped',
        'worker started',
        'worker stopped',
      ]);
    } finally {
      rmSync(project, { recursive: true, force: true });
    }
  });

  it('refuses an IMAGE_NODE of another major before any test runs, naming it', () => {
    const run = runTests({ imageMajor: otherMajor, imageVersion: 'v23.1.0' });
    expect(run.status).toBe(1);
    expect(run.ran).toEqual([]);
    expect(run.stderr).toMatch(
      new RegExp(`image-bin/node is Node v23\\.1\\.0, the image runs Node ${otherMajor}`),
    );
  });
});
