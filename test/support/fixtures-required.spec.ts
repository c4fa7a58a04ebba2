import { spawnSync } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const CONFIG = join(__dirname, '..', '..', 'jest.config.js');

/**
 * jest.config.js in a checkout without ../shared beside it: one suite reads the fixtures, one
 * does not. Loaded in a process of its own, as jest loads it, with `env` added.
 */
function loadConfigWithoutFixtures(env: Record<string, string>) {
  const parent = mkdtempSync(join(tmpdir(), 'fixtures-required-'));
  try {
    const project = join(parent, 'project');
    for (const dir of ['src', 'test', 'bench']) mkdirSync(join(project, dir), { recursive: true });
    copyFileSync(CONFIG, join(project, 'jest.config.js'));
    writeFileSync(
      join(project, 'src', 'reads.spec.ts'),
      "import { fixturePath } from '../test/support/bittensor-fixtures';\n",
    );
    writeFileSync(join(project, 'src', 'plain.spec.ts'), "it('runs', () => undefined);\n");
    const script =
      "const c = require('./jest.config.js'); " +
      'console.log(JSON.stringify(c.projects[0].testPathIgnorePatterns));';
    const { ALLOW_MISSING_FIXTURES: _, ...inherited } = process.env;
    const run = spawnSync(process.execPath, ['-e', script], {
      cwd: project,
      env: { ...inherited, ...env },
      encoding: 'utf8',
      timeout: 30_000,
    });
    return { status: run.status, stdout: run.stdout, stderr: run.stderr };
  } finally {
    rmSync(parent, { recursive: true, force: true });
  }
}

describe('A run without the Bittensor fixtures', () => {
  it('fails at once, naming the suites that read them', () => {
    const run = loadConfigWithoutFixtures({});
    expect(run.status).not.toBe(0);
    expect(run.stderr).toMatch(/shared\/fixtures\/bittensor is missing, and these suites read it/);
    expect(run.stderr).toContain('src/reads.spec.ts');
    expect(run.stderr).not.toContain('src/plain.spec.ts');
    expect(run.stderr).toContain('ALLOW_MISSING_FIXTURES=1');
  });

  it('skips those suites, and names them, when ALLOW_MISSING_FIXTURES=1 says so', () => {
    const run = loadConfigWithoutFixtures({ ALLOW_MISSING_FIXTURES: '1' });
    expect(run.status).toBe(0);
    expect(JSON.parse(run.stdout)).toEqual(['/node_modules/', '<rootDir>/src/reads.spec.ts']);
    expect(run.stderr).toContain('src/reads.spec.ts');
  });
});
