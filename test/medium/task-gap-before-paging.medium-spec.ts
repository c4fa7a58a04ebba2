import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Logger } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { Clock } from '../../src/common/clock/clock';
import { DatasetManifest, manifestPathOf } from '../../src/modules/tasks/dataset-writer';
import { TasksRepository } from '../../src/modules/tasks/tasks.repository';
import { TasksService } from '../../src/modules/tasks/tasks.service';
import { insertExpiredTask, lifecycleReplica } from '../support/expired-tasks';
import { MediumDatabase, openMediumDatabase } from '../support/medium-database';
import { testConfig } from '../support/test-config';

const HOUR = 3_600_000;
const EXPIRY = Date.parse('2026-11-23T00:00:00Z');
const at = (hours: number) => new Date(EXPIRY + hours * HOUR);

/**
 * A task collected before migration TaskCollectionPaging (2026-11-24) recorded no head
 * (`collect_head` null, the migration's default): each of its collections asked the whole window
 * up to its own time. Its dataset's gap showed the whole window though its collections asked
 * for all of it but the posts after the last one (docs/decisions.md, "Scraping task lifecycle").
 */
describe('The gap of a task collected before collections paged', () => {
  let medium: MediumDatabase;
  let database: DataSource;
  let dataDir: string;
  let now: Date;

  /** The dataset's gap as the API shows the task (`GET /api/v1/tasks/{id}`). */
  const shownGap = async (id: string) => {
    const config = testConfig({ tasks: { collectIntervalMs: HOUR, tickMs: 60_000 } });
    const tasks = new TasksService(
      new TasksRepository(database),
      { now: () => now } as Clock,
      config,
    );
    const shown = await tasks.get(id);
    expect(shown.dataset).toBeDefined();
    return shown.dataset!.gap;
  };
  /**
   * A Reddit task completed on 2026-11-23 as a release before paging left it: `collections`
   * collections, the last at `lastCollected`, no collect_* progress, its items pruned.
   */
  const insertCompleted = (
    id: string,
    collections: number,
    lastCollected: Date | null,
    window: { start: Date | null; end: Date | null } = { start: null, end: null },
  ) =>
    database.query(
      `INSERT INTO scraping_tasks (id, platform, label, state, registered_by, registered_at,
         expires_at, post_start, post_end, collections, items_collected, last_collected_at,
         completed_at, dataset_file, dataset_rows, dataset_bytes, dataset_sha256)
       VALUES ($1, 'reddit', 'r/bitcoin', 'completed', '5Hotkey', $2, $3, $4, $5, $6, $6 * 50, $7,
         $8, $9, $6 * 50, 1234, $10)`,
      [
        id,
        at(-7 * 24).toISOString(),
        at(0).toISOString(),
        window.start?.toISOString() ?? null,
        window.end?.toISOString() ?? null,
        collections,
        lastCollected?.toISOString() ?? null,
        at(0.05).toISOString(),
        join(dataDir, 'datasets', `${id}.jsonl.gz`),
        'a'.repeat(64),
      ],
    );

  beforeAll(async () => {
    medium = await openMediumDatabase({ own: 'taskgapbeforepaging' });
    database = medium.dataSource;
  });
  afterAll(() => medium.close());
  beforeEach(() => {
    dataDir = mkdtempSync(join(tmpdir(), 'task-gap-before-paging-'));
    now = at(24 * 12);
    for (const level of ['log', 'warn', 'error'] as const)
      jest.spyOn(Logger.prototype, level).mockImplementation(() => undefined);
  });
  afterEach(() => {
    jest.restoreAllMocks();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('names the posts after its last collection, which none asked for, not its whole window', async () => {
    await insertCompleted('hourly', 167, at(-0.75));
    expect(await shownGap('hourly')).toEqual({
      start: at(-0.75).toISOString(),
      end: at(0).toISOString(),
    });
  });

  it('is null for a window that had ended by its last collection, which asked for all of it', async () => {
    await insertCompleted('closed', 60, at(-1), { start: at(-72), end: at(-48) });
    expect(await shownGap('closed')).toBeNull();
  });

  // Collected only before its window began (a release before 2026-12-02 asked then, and found
  // nothing in it): no collection asked for any of the window.
  it('still names the whole window when no collection asked for any of it', async () => {
    await insertCompleted('never', 0, null);
    expect(await shownGap('never')).toEqual({ start: null, end: at(0).toISOString() });
    await insertCompleted('too-early', 3, at(-100), { start: at(-48), end: null });
    expect(await shownGap('too-early')).toEqual({
      start: at(-48).toISOString(),
      end: at(0).toISOString(),
    });
  });

  // A failed task of that time, sent back to compiling (the master key's recompile): the compile's
  // warning and the manifest say what the API says.
  it('compiles such a task saying the same gap in its warning, its manifest and the API', async () => {
    await insertExpiredTask(database, 'recompiled', EXPIRY, 3, 60_000);
    await database.query(
      `UPDATE scraping_tasks SET state = 'compiling', collect_head = NULL, collections = 40,
         last_collected_at = $2 WHERE id = $1`,
      ['recompiled', at(-0.5).toISOString()],
    );
    const warn = jest.spyOn(Logger.prototype, 'warn').mockImplementation(() => undefined);
    expect(await lifecycleReplica(database, dataDir, () => now).service.compileExpired()).toBe(1);

    const gap = { start: at(-0.5).toISOString(), end: at(0).toISOString() };
    expect(await shownGap('recompiled')).toEqual(gap);
    expect(warn).toHaveBeenCalledWith(
      { task_id: 'recompiled' },
      `task recompiled: its final collection did not reach the posts of ${gap.start} to ${gap.end}; the dataset lacks them`,
    );
    const [{ dataset_file: file }] = await database.query<{ dataset_file: string }[]>(
      `SELECT dataset_file FROM scraping_tasks WHERE id = 'recompiled'`,
    );
    const manifest = JSON.parse(readFileSync(manifestPathOf(file), 'utf8')) as DatasetManifest;
    expect(manifest.gap).toEqual(gap);
  });
});
