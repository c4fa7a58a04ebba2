import { Logger } from '@nestjs/common';
import { DAY_MS, HOUR_MS } from '../../common/clock/durations';
import { Clock } from '../../common/clock/clock';
import { AppConfig } from '../../config/app-config';
import { datasetFileHere } from './dataset-path';
import { howFileDiffers } from './dataset-writer';
import { TaskLifecycleRepository } from './task-lifecycle.repository';

/**
 * Completed tasks whose stored items one pass deletes: about 20,000 rows a full task, so a
 * pass's deletes stay within seconds.
 */
const PRUNE_TASKS_PER_PASS = 10;
const PRUNE_IDLE_MS = HOUR_MS;
/**
 * How long a completed task keeps its stored items: far longer than any compile pass, so a
 * second compile of the task (another replica's, its job lock lost) never reads them cut short.
 * See docs/decisions.md, "Scraping task lifecycle".
 */
export const PRUNE_GRACE_MS = HOUR_MS;
/** How long a task whose file is not as recorded is left before it is looked at again. */
export const UNPRUNABLE_RETRY_MS = DAY_MS;

/**
 * The stored items of completed tasks, deleted once their dataset file holds them. Run by
 * TaskLifecycleService's pass.
 */
export class TaskPruner {
  /**
   * Completed tasks whose dataset file was missing or not as recorded, by when (clock ms) to
   * look at them again: their stored items are kept meanwhile. Looked at again a day later, not
   * never: a file back from a restore, or a volume back from an outage, left its task's items
   * for the life of the process (a state audit).
   */
  private readonly unprunable = new Map<string, number>();
  /**
   * Until when (performance.now()) no completed task is looked for to prune, unless the clock
   * reaches `nextDueAt` first: the time (clock ms) the earliest task with items left becomes due.
   */
  private pruneIdleUntil = 0;
  private nextDueAt = Number.POSITIVE_INFINITY;

  constructor(
    private readonly repository: TaskLifecycleRepository,
    private readonly clock: Clock,
    private readonly config: AppConfig,
    private readonly logger: Logger,
    /** Whether the service is shutting down: its pass then prunes no more tasks. */
    private readonly stopping: () => boolean,
  ) {}

  /**
   * Deletes the stored items of up to `limit` tasks completed at least PRUNE_GRACE_MS ago, once
   * their JSON lines file is on disk with its recorded size and SHA-256 (read through once: the
   * size alone let a file changed in place, a flipped bit, take the last other copy of its rows
   * with it; a filesystem faults audit), the file a download here would serve
   * (datasetFileHere: its name under this DATA_DIR, whatever directory the task recorded): the
   * file holds them. Not at completion: another replica may be compiling the task at once, and
   * read the rows after they were gone. A task whose file is not on disk so is left alone, and
   * said once a day (in this process): its items may be all that is left of its dataset. Once
   * none is due, looked for again when the earliest task with items left becomes
   * due, or an hour later (a task completed since is due an hour after its completion, so not
   * before); a fixed hour's wait alone kept a task completed just after such a pass for two.
   */
  async pruneCompletedItems(limit = PRUNE_TASKS_PER_PASS): Promise<number> {
    const now = this.clock.now().getTime();
    if (performance.now() < this.pruneIdleUntil && now < this.nextDueAt) return 0;
    for (const [id, until] of this.unprunable) if (now >= until) this.unprunable.delete(id);
    const skip = [...this.unprunable.keys()];
    const tasks = await this.repository.completedWithItems(
      skip,
      new Date(now - PRUNE_GRACE_MS),
      limit,
    );
    if (tasks.length === 0) await this.idleUntilNextDue(skip);
    let pruned = 0;
    for (const task of tasks) {
      if (this.stopping()) break;
      const file = datasetFileHere(this.config.dataDir, task.dataset_file!);
      const problem = await howFileDiffers(file, {
        bytes: Number(task.dataset_bytes),
        sha256: task.dataset_sha256,
      });
      if (problem) {
        this.unprunable.set(task.id, now + UNPRUNABLE_RETRY_MS);
        this.logger.warn(
          { task_id: task.id },
          `task ${task.id}: its stored items are kept: its dataset file ${file} ${problem}; looked at again in a day`,
        );
        continue;
      }
      const deleted = await this.repository.deleteCompletedItems(task.id);
      this.logger.log(
        { task_id: task.id },
        `task ${task.id}: ${deleted} stored items deleted (its dataset file holds them)`,
      );
      pruned += 1;
    }
    return pruned;
  }

  private async idleUntilNextDue(skip: readonly string[]): Promise<void> {
    this.pruneIdleUntil = performance.now() + PRUNE_IDLE_MS;
    const earliest = await this.repository.earliestCompletedWithItems(skip);
    this.nextDueAt =
      earliest === null ? Number.POSITIVE_INFINITY : earliest.getTime() + PRUNE_GRACE_MS;
  }
}
