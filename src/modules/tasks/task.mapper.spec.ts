import { toTaskDto } from './task.mapper';
import { PARQUET_VERSION } from './dataset-parquet';
import { TaskRow } from './task.types';

const DAY = 24 * 3600 * 1000;
const REGISTERED = new Date('2026-01-01T00:00:00.000Z');
const LATE_AFTER_MS = 3_660_000;

const ACTIVE: TaskRow = {
  id: 'tao x/1',
  platform: 'x',
  label: '#tao',
  keyword: null,
  post_start: null,
  post_end: null,
  state: 'active',
  registered_by: '5Hotkey',
  registered_at: REGISTERED,
  expires_at: new Date(REGISTERED.getTime() + 7 * DAY),
  items_collected: 0,
  collections: 0,
  last_collected_at: null,
  collect_head: null,
  collect_cursor: null,
  collect_floor: null,
  collect_back_next: false,
  collect_failures: 0,
  collect_failed_at: null,
  compile_attempts: 0,
  compile_failed_at: null,
  completed_at: null,
  failure_reason: null,
  dataset_file: null,
  dataset_rows: null,
  dataset_bytes: null,
  dataset_sha256: null,
  dataset_written_at: null,
  data_start: null,
  data_end: null,
  parquet_file: null,
  parquet_bytes: null,
  parquet_sha256: null,
  parquet_version: null,
  parquet_written_at: null,
  network_block: null,
  network_registered_at: null,
  network_commit_sha: null,
};

const COMPLETED: TaskRow = {
  ...ACTIVE,
  state: 'completed',
  items_collected: 3,
  collections: 168,
  // Its final collection reached the window's end at expiry: nothing left to page back.
  last_collected_at: new Date(REGISTERED.getTime() + 7 * DAY + 60_000),
  collect_head: new Date(REGISTERED.getTime() + 7 * DAY),
  completed_at: new Date(REGISTERED.getTime() + 7 * DAY + 5_000),
  dataset_file: '/srv/data/datasets/tao%20x%2F1.jsonl.gz',
  dataset_rows: 3,
  dataset_bytes: '1234',
  dataset_sha256: 'a'.repeat(64),
  data_start: new Date('2026-01-02T08:00:00.000Z'),
  data_end: new Date('2026-01-07T20:30:00.000Z'),
  parquet_file: '/srv/data/datasets/tao%20x%2F1.parquet',
  parquet_bytes: '987',
  parquet_sha256: 'b'.repeat(64),
  parquet_version: PARQUET_VERSION,
};

describe(toTaskDto.name, () => {
  it("lists a completed task's dataset: its size, hash, time range and both downloads", () => {
    const dto = toTaskDto(COMPLETED, new Date(REGISTERED.getTime() + 8 * DAY), LATE_AFTER_MS);
    expect(dto.dataset).toEqual({
      content_type: 'application/gzip',
      rows: 3,
      bytes: 1234,
      sha256: 'a'.repeat(64),
      data_start: '2026-01-02T08:00:00.000Z',
      data_end: '2026-01-07T20:30:00.000Z',
      download_url: '/api/v1/tasks/tao%20x%2F1/dataset',
      gap: null,
      parquet: {
        content_type: 'application/vnd.apache.parquet',
        bytes: 987,
        sha256: 'b'.repeat(64),
        download_url: '/api/v1/tasks/tao%20x%2F1/dataset?format=parquet',
      },
    });
    expect(dto.completed_at).toBe(COMPLETED.completed_at!.toISOString());
  });

  // What TaskCompiler.warnOfFinalGap logs at the compile (docs/decisions.md, "Scraping task
  // lifecycle"): a consumer reading the task before downloading learns the dataset lacks it.
  describe('the posting times its final collection did not reach (dataset.gap)', () => {
    const at = (ms: number) => new Date(REGISTERED.getTime() + ms);
    const expiry = COMPLETED.expires_at.getTime();
    const gapOf = (task: Partial<TaskRow>) =>
      toTaskDto({ ...COMPLETED, ...task }, at(8 * DAY), LATE_AFTER_MS).dataset?.gap;

    it('names the range still to page back when the wait ran out', () => {
      const gap = gapOf({
        last_collected_at: at(7 * DAY + 3_600_000),
        collect_head: at(7 * DAY),
        collect_cursor: at(7 * DAY - 600_000),
        collect_floor: at(7 * DAY - 3_600_000),
        collect_back_next: true,
      });
      expect(gap).toEqual({
        start: at(7 * DAY - 3_600_000).toISOString(),
        end: at(7 * DAY - 600_000).toISOString(),
      });
    });

    it('names the last hour when no final page was stored (its collection failed)', () => {
      const gap = gapOf({ last_collected_at: at(7 * DAY - 3_600_000), collect_head: at(6 * DAY) });
      expect(gap).toEqual({ start: at(6 * DAY).toISOString(), end: at(7 * DAY).toISOString() });
    });

    it('starts at the window’s start, and is open (null) for a task with none', () => {
      const never = { last_collected_at: null, collect_head: null };
      expect(gapOf(never)).toEqual({ start: null, end: new Date(expiry).toISOString() });
      const window = { post_start: at(DAY), post_end: at(2 * DAY) };
      expect(gapOf({ ...never, ...window })).toEqual({
        start: at(DAY).toISOString(),
        end: at(2 * DAY).toISOString(),
      });
    });

    it('is null for a window collected to its end before expiry', () => {
      const window = { post_end: at(2 * DAY), collect_head: at(2 * DAY) };
      expect(gapOf({ ...window, last_collected_at: at(3 * DAY) })).toBeNull();
    });

    it('is not shown before the task completes: it has no dataset yet', () => {
      expect(
        toTaskDto({ ...ACTIVE, state: 'compiling' }, at(7 * DAY), LATE_AFTER_MS),
      ).not.toHaveProperty('dataset');
    });
  });

  // Compiled a day after expiry, the task has lived more than its seven days.
  it('counts the lifetime elapsed up to the whole of it, and a finished task is never behind', () => {
    const late = new Date(REGISTERED.getTime() + 8 * DAY);
    expect(toTaskDto(COMPLETED, late, LATE_AFTER_MS).progress).toMatchObject({
      lifetime_elapsed: 1,
      collection_behind: false,
    });
    const failed = { ...ACTIVE, state: 'failed' as const, failure_reason: 'ENOSPC' };
    expect(toTaskDto(failed, late, LATE_AFTER_MS)).toMatchObject({
      progress: { lifetime_elapsed: 1, collection_behind: false },
      failure_reason: 'ENOSPC',
    });
  });

  it('reads 1 only once the lifetime has ended: rounded down, not to the nearest', () => {
    const at = (ms: number) => new Date(REGISTERED.getTime() + ms);
    expect(toTaskDto(ACTIVE, at(7 * DAY - 1000), LATE_AFTER_MS).progress.lifetime_elapsed).toBe(
      0.999,
    );
    expect(toTaskDto(ACTIVE, at(7 * DAY), LATE_AFTER_MS).progress.lifetime_elapsed).toBe(1);
  });

  it('shows an active task behind once a whole interval and a tick passed without a collection', () => {
    const at = (ms: number) => new Date(REGISTERED.getTime() + ms);
    expect(toTaskDto(ACTIVE, at(LATE_AFTER_MS), LATE_AFTER_MS).progress).toMatchObject({
      collection_behind: false,
      lifetime_elapsed: 0.006,
    });
    expect(toTaskDto(ACTIVE, at(LATE_AFTER_MS + 1), LATE_AFTER_MS).progress.collection_behind).toBe(
      true,
    );
  });

  // Not collected before its window begins (dueForCollection): not behind for that either.
  it('counts a task whose post window begins later as behind only an interval after it begins', () => {
    const at = (ms: number) => new Date(REGISTERED.getTime() + ms);
    const later = { ...ACTIVE, post_start: at(2 * DAY), post_end: at(3 * DAY) };
    expect(toTaskDto(later, at(DAY), LATE_AFTER_MS).progress.collection_behind).toBe(false);
    expect(toTaskDto(later, at(2 * DAY + LATE_AFTER_MS + 1), LATE_AFTER_MS).progress).toMatchObject(
      { collection_behind: true },
    );
  });
});
