import { describeMigrations } from './migrate';

describe(describeMigrations.name, () => {
  // Every start of an up-to-date replica: a line then would say nothing, at every start.
  it('says nothing when nothing was applied and the schema is this release’s', () => {
    expect(describeMigrations({ applied: [], unknown: [] })).toEqual({});
  });

  it('names the migrations applied, in one line', () => {
    expect(describeMigrations({ applied: ['A1', 'B2'], unknown: [] })).toEqual({
      log: 'migrations applied: A1, B2',
    });
  });

  it('warns of a server that does not vacuum on its own, and says what to do', () => {
    const { vacuum } = describeMigrations({ applied: [], unknown: [], autovacuumOff: true });
    expect(vacuum).toMatch(/^the database server's autovacuum is off: .*Turn autovacuum on/);
    expect(describeMigrations({ applied: [], unknown: [], autovacuumOff: false })).toEqual({});
  });

  it('warns of the migrations a newer release ran, and how to go back', () => {
    const { log, warn } = describeMigrations({ applied: [], unknown: ['Newer3'] });
    expect(log).toBeUndefined();
    expect(warn).toMatch(
      /^the database has migrations this release does not know \(Newer3\): .*npm run migration:revert/,
    );
  });
});
