import { statfs } from 'node:fs/promises';
import { dirname } from 'node:path';
import { Injectable, OnModuleInit } from '@nestjs/common';
import { MetricsService } from '../../common/metrics/metrics.service';
import { AppConfig } from '../../config/app-config';
import { InjectConfig } from '../../config/config.module';
import { datasetsDirectory } from './dataset-path';
import { TASK_STATES } from './task.types';
import { TasksRepository } from './tasks.repository';
import { TasksService } from './tasks.service';
import { Clock } from '../../common/clock/clock';

/**
 * The space of the file system `path` is (or will be) on, in bytes: `free` as an unprivileged
 * process may use it (what a dataset's write gets), `total` its size. A path not made yet (the
 * datasets directory before the first compile) is read at its nearest existing parent.
 */
export async function diskSpace(path: string): Promise<{ free: number; total: number }> {
  try {
    const { bsize, bavail, blocks } = await statfs(path);
    return { free: bavail * bsize, total: blocks * bsize };
  } catch (error) {
    const parent = dirname(path);
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT' || parent === path) throw error;
    return diskSpace(parent);
  }
}

/**
 * Tasks by state, counted in Postgres at scrape time (one small GROUP BY per scrape), and the
 * space left where their datasets are written.
 */
@Injectable()
export class TaskMetrics implements OnModuleInit {
  constructor(
    private readonly metrics: MetricsService,
    private readonly repository: TasksRepository,
    private readonly tasks: TasksService,
    private readonly clock: Clock,
    @InjectConfig() private readonly config: AppConfig,
  ) {}

  onModuleInit(): void {
    this.metrics.gauge(
      'tasks',
      'Scraping tasks by state (active, compiling, completed, failed), across all replicas',
      ['state'],
      async () => {
        const counts = await this.repository.countByState();
        // Every state is reported, 0 included, so that alerts on a state see it disappear.
        return TASK_STATES.map((state) => ({ labels: { state }, value: counts.get(state) ?? 0 }));
      },
    );
    this.metrics.gauge(
      'tasks_collection_behind',
      'Active tasks not collected within TASK_COLLECT_INTERVAL (plus a tick): the collection budget is short',
      [],
      async () => [
        {
          labels: {},
          value: await this.repository.countBehind(this.clock.now(), this.tasks.lateAfterMs()),
        },
      ],
    );
    // Datasets are kept for good (the only copy of a completed task's items): a full disk showed
    // only afterwards, as failed compiles (a soak audit's finding).
    this.metrics.gauge(
      'datasets_disk_bytes',
      'Bytes of the file system DATA_DIR/datasets is on: free (for this process) and total',
      ['state'],
      async () => {
        const { free, total } = await diskSpace(datasetsDirectory(this.config.dataDir));
        return [
          { labels: { state: 'free' }, value: free },
          { labels: { state: 'total' }, value: total },
        ];
      },
    );
  }
}
