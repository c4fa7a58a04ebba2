import Redis from 'ioredis';
import { Client } from 'pg';
import { DataSource } from 'typeorm';

/** What opening a connection threw, synchronously or not. */
async function refusal(connect: () => unknown): Promise<unknown> {
  try {
    await connect();
  } catch (error) {
    return error;
  }
  return undefined;
}

// The guard (./unit-guard.ts, a setup file of the unit project; deliberately not imported here)
// is tested like the rest: were it gone, these would reach a server or wait for one.
describe('The unit tier', () => {
  const refused = expect.objectContaining({
    message: expect.stringContaining('a unit spec may not open'),
  });

  it('refuses a Postgres connection, from a client or from TypeORM', async () => {
    expect(await refusal(() => new Client({ host: '127.0.0.1' }).connect())).toEqual(refused);
    const dataSource = new DataSource({ type: 'postgres', host: '127.0.0.1', port: 5432 });
    expect(await refusal(() => dataSource.initialize())).toEqual(refused);
  });

  it('refuses a Redis connection', async () => {
    expect(await refusal(() => new Redis({ host: '127.0.0.1' }))).toEqual(refused);
  });
});
