import { runMigrationCommand } from './migrate-command';

describe(runMigrationCommand.name, () => {
  // A deployment that migrates as a step of its own must stop when the step failed.
  it('exits 1 and says why when it cannot migrate', async () => {
    const stdout: string[] = [];
    const stderr: string[] = [];
    const status = await runMigrationCommand(
      {},
      { stdout: (line) => stdout.push(line), stderr: (line) => stderr.push(line) },
    );
    expect(status).toBe(1);
    expect(stdout).toEqual([]);
    expect(stderr).toEqual([
      'migration failed: DATABASE_URL must be set to run migrations from the CLI',
    ]);
  });
});
