import { randomBytes, randomUUID } from 'node:crypto';
import { ApiKeyEntity } from '../../src/modules/api-keys/api-key.entity';
import { ApiKeysRepository } from '../../src/modules/api-keys/api-keys.repository';
import { MediumDatabase, openMediumDatabase } from '../support/medium-database';

/**
 * `PATCH /keys/{id}` checks that the key is active and then updates it; a deactivation between
 * the two must win (the documented 409), so the update itself only touches an active key. The
 * service's unit spec fakes this repository: only a real database shows the condition holds.
 */
describe('ApiKeysRepository.updateActive', () => {
  let medium: MediumDatabase;
  let keys: ApiKeysRepository;

  beforeAll(async () => {
    medium = await openMediumDatabase({ entities: [ApiKeyEntity] });
    keys = new ApiKeysRepository(medium.dataSource);
  });
  afterAll(() => medium.close());

  const newFields = () => ({
    name: 'before',
    keyHash: randomBytes(32).toString('hex'),
    prefix: 'p',
    tier: 'regular' as const,
    expiresAt: new Date('2099-01-01T00:00:00Z'),
    rateLimit: 50,
  });
  const newKey = () => keys.insert(newFields());

  it('changes the fields given, clears those given as null and leaves the rest', async () => {
    const key = await newKey();

    const updated = await keys.updateActive(key.id, { name: 'after', expiresAt: null });

    expect(updated?.after).toMatchObject({
      id: key.id,
      name: 'after',
      expiresAt: null,
      rateLimit: 50,
    });
    // And the key as it was when the update locked it: what the audit line compares.
    expect(updated?.before).toMatchObject({ name: 'before', expiresAt: key.expiresAt });
  });

  it('changes nothing when the last step before the commit throws (a client gone)', async () => {
    const key = await newKey();
    const gone = new Error('client gone');

    await expect(
      keys.updateActive(key.id, { name: 'after' }, () => {
        throw gone;
      }),
    ).rejects.toBe(gone);
    expect(await keys.findById(key.id)).toMatchObject({ name: 'before' });
    await expect(
      keys.insert({ ...newFields(), name: 'never stored' }, () => {
        throw gone;
      }),
    ).rejects.toBe(gone);
    expect(
      await medium.dataSource.query("SELECT id FROM api_keys WHERE name = 'never stored'"),
    ).toEqual([]);
  });

  it('never changes a key deactivated before the update, and says so with null', async () => {
    const key = await newKey();
    await keys.deactivate(key.id);

    expect(await keys.updateActive(key.id, { name: 'after', rateLimit: 1_000 })).toBeNull();
    expect(await keys.findById(key.id)).toMatchObject({
      name: 'before',
      rateLimit: 50,
      isActive: false,
    });
  });

  it('answers null for a key that does not exist', async () => {
    expect(await keys.updateActive(randomUUID(), { name: 'after' })).toBeNull();
  });
});
