import { TaskDto } from './dto/task.dto';
import { DatasetFormat, isRunning, TASK_LIFETIME_MS, TaskRow } from './task.types';
import { hasCurrentParquet } from './dataset-parquet';
import { datasetGapOf } from './dataset-writer';

/** `application/vnd.apache.parquet`: the media type registered for Parquet (IANA, 2024). */
export const DATASET_CONTENT_TYPES: Record<DatasetFormat, string> = {
  jsonl: 'application/gzip',
  parquet: 'application/vnd.apache.parquet',
};

/** `lateAfterMs`: how long an active task may go without a collection before it is behind. */
export function toTaskDto(task: TaskRow, now: Date, lateAfterMs: number): TaskDto {
  const elapsed = (now.getTime() - task.registered_at.getTime()) / TASK_LIFETIME_MS;
  // A task is not behind before its post window begins: it is not collected until then.
  const lastCollection =
    task.last_collected_at?.getTime() ??
    Math.max(task.registered_at.getTime(), task.post_start?.getTime() ?? 0);
  const running = isRunning(task, now);
  const downloadUrl = `/api/v1/tasks/${encodeURIComponent(task.id)}/dataset`;
  return {
    id: task.id,
    state: task.state,
    params: {
      platform: task.platform,
      label: task.label,
      keyword: task.keyword,
      post_start_datetime: task.post_start?.toISOString() ?? null,
      post_end_datetime: task.post_end?.toISOString() ?? null,
    },
    registered_by: task.registered_by,
    registered_at: task.registered_at.toISOString(),
    ...(task.network_block !== null && task.network_registered_at && task.network_commit_sha
      ? {
          network_registration: {
            block: Number(task.network_block),
            registered_at: task.network_registered_at.toISOString(),
            commit_sha: task.network_commit_sha,
          },
        }
      : {}),
    expires_at: task.expires_at.toISOString(),
    progress: {
      items_collected: task.items_collected,
      collections: task.collections,
      last_collected_at: task.last_collected_at?.toISOString() ?? null,
      // Rounded down: rounded, the last five minutes of an active task's week read 1 (a numbers
      // audit), which a dashboard shows as done.
      lifetime_elapsed: Math.floor(Math.min(1, Math.max(0, elapsed)) * 1000) / 1000,
      collection_behind: running && now.getTime() - lastCollection > lateAfterMs,
    },
    completed_at: task.completed_at?.toISOString() ?? null,
    ...(task.state === 'completed' && task.dataset_sha256
      ? {
          dataset: {
            content_type: DATASET_CONTENT_TYPES.jsonl,
            rows: task.dataset_rows ?? 0,
            bytes: Number(task.dataset_bytes ?? 0),
            sha256: task.dataset_sha256,
            data_start: task.data_start?.toISOString() ?? null,
            data_end: task.data_end?.toISOString() ?? null,
            download_url: downloadUrl,
            // What the compile warned of (TaskCompiler.warnOfFinalGap) and wrote in the
            // manifest, from the same row.
            gap: datasetGapOf(task),
            // A file an earlier writer made is written again at its next download, with a new
            // hash: until then it is not listed (as before a first Parquet download).
            ...(hasCurrentParquet(task)
              ? {
                  parquet: {
                    content_type: DATASET_CONTENT_TYPES.parquet,
                    bytes: Number(task.parquet_bytes ?? 0),
                    sha256: task.parquet_sha256,
                    download_url: `${downloadUrl}?format=parquet`,
                  },
                }
              : {}),
          },
        }
      : {}),
    ...(task.failure_reason ? { failure_reason: task.failure_reason } : {}),
  };
}
