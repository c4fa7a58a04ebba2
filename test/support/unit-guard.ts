/**
 * Set up before every unit spec (jest.config.js): the unit tier runs without Postgres and
 * Redis, so opening a connection to either fails the spec at once, with where to move it,
 * instead of passing on a machine that happens to run both. Patched in the spec's own module
 * registry, so the other tiers, which share jest's workers, keep the real clients; and only
 * when the spec (or what it loads, TypeORM included) first requires the client: most unit
 * specs never do, and loading both clients for each of them cost every unit run seconds of CPU.
 */
const UNIT_TIER_REFUSAL =
  'a unit spec may not open a database connection: test it in the medium tier (test/medium)';

jest.mock('pg', () => {
  const pg = jest.requireActual<typeof import('pg')>('pg');
  pg.Client.prototype.connect = function refusePostgres(): never {
    throw new Error(`Postgres: ${UNIT_TIER_REFUSAL}`);
  };
  return pg;
});

jest.mock('ioredis', () => {
  const ioredis = jest.requireActual<typeof import('ioredis')>('ioredis');
  ioredis.default.prototype.connect = function refuseRedis(): never {
    throw new Error(`Redis: ${UNIT_TIER_REFUSAL}`);
  };
  return ioredis;
});
