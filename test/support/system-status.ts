import { SystemStatusDto } from '../../src/modules/health/dto/system-status.dto';
import { TEST_MASTER_KEY, TestApp } from './test-app';

/** `GET /api/v1/monitoring/system-status` with the master key, expecting 200. */
export async function systemStatus(app: TestApp): Promise<SystemStatusDto> {
  const answer = await app.http
    .get('/api/v1/monitoring/system-status')
    .set('X-API-Key', TEST_MASTER_KEY)
    .expect(200);
  return answer.body as SystemStatusDto;
}
