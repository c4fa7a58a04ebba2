import { DataSource } from 'typeorm';
import {
  INDEX_SYNC_JOB,
  IndexSyncReport,
  IndexSyncService,
} from '../../src/network/index-sync/index-sync.service';
import { NetworkService } from '../../src/network/network.service';
import { TestApp } from './test-app';

/**
 * Runs the app's index sync now, as if its interval had passed, and waits for what it left
 * running (the spot checks' scores are written just after it).
 */
export async function syncIndexNow(app: TestApp): Promise<IndexSyncReport> {
  await app.app.get(DataSource).query('DELETE FROM job_runs WHERE name = $1', [INDEX_SYNC_JOB]);
  const report = await app.app.get(IndexSyncService).runIfDue();
  if (!report) throw new Error('the index sync did not run');
  await app.app.get(NetworkService).settled();
  return report;
}
