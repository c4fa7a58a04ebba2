import { runMigrationCommand } from './migrate-command';

/** The command's status and what it wrote, run without a database behind DATABASE_URL. */
async function run(args: string[], env: NodeJS.ProcessEnv = {}) {
  const stdout: string[] = [];
  const stderr: string[] = [];
  const status = await runMigrationCommand(args, env, {
    stdout: (line) => stdout.push(line),
    stderr: (line) => stderr.push(line),
  });
  return { status, stdout, stderr };
}

describe(runMigrationCommand.name, () => {
  // An operator's first try, against production's DATABASE_URL: it once ran every migration.
  it.each([['--help'], ['-h']])(
    'prints its usage and exit statuses for %s, and connects to nothing',
    async (flag) => {
      const { status, stdout, stderr } = await run([flag], {
        DATABASE_URL: 'postgres://nobody@127.0.0.1:1/none',
      });
      expect(status).toBe(0);
      expect(stdout[0]).toMatch(/^usage: npm run migration:run \| npm run migration:revert /);
      expect(stdout.join(' ')).toContain('2 arguments or settings refused (nothing done)');
      expect(stderr).toEqual([]);
    },
  );

  it.each([[['--dry-run']], [['--bogus']], [['now']], [['--help', '--revert']]])(
    'refuses %j with exit 2 before connecting',
    async (args) => {
      const { status, stdout, stderr } = await run(args, {
        DATABASE_URL: 'postgres://nobody@127.0.0.1:1/none',
      });
      expect(status).toBe(2);
      expect(stdout).toEqual([]);
      expect(stderr[0]).toMatch(/^migration: /);
      expect(stderr[1]).toMatch(/^usage: /);
    },
  );

  // A retrying job must not retry a setting that cannot work: 2, not the 1 of a failure.
  it.each([[[]], [['--revert']]])(
    'exits 2 and says why without DATABASE_URL (%j)',
    async (args) => {
      const { status, stderr } = await run(args);
      expect(status).toBe(2);
      expect(stderr[0]).toBe('migration: DATABASE_URL must be set to run migrations from the CLI');
    },
  );
});
