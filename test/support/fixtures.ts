import { ApiKeyTier } from '../../src/common/auth/api-key-tier';
import { TEST_MASTER_KEY, TestApp } from './test-app';

export interface CreatedKey {
  key: string;
  id: string;
  tier: ApiKeyTier;
}

export interface KeyOptions {
  tier?: ApiKeyTier;
  name?: string;
  expires_at?: string;
  rate_limit?: number;
}

export async function createKey(app: TestApp, options: KeyOptions = {}): Promise<CreatedKey> {
  const response = await app.http
    .post('/api/v1/keys')
    .set('X-API-Key', TEST_MASTER_KEY)
    .send({ name: 'test key', ...options })
    .expect(200);
  return response.body as CreatedKey;
}
