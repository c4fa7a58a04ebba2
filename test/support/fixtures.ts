import { ApiKeyTier } from '../../src/modules/api-keys/api-key-tier';
import { TEST_MASTER_KEY, TestApp } from './test-app';

export interface CreatedKey {
  key: string;
  id: string;
  tier: ApiKeyTier;
}

export async function createKey(
  app: TestApp,
  options: { tier?: ApiKeyTier; name?: string } = {},
): Promise<CreatedKey> {
  const response = await app.http
    .post('/api/v1/keys')
    .set('X-API-Key', TEST_MASTER_KEY)
    .send({ name: options.name ?? 'test key', ...(options.tier ? { tier: options.tier } : {}) })
    .expect(200);
  return response.body as CreatedKey;
}
