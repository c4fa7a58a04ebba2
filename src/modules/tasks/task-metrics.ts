import { Injectable, OnModuleInit } from '@nestjs/common';
import { MetricsService } from '../../common/metrics/metrics.service';
import { TASK_STATES } from './task.types';
import { TasksRepository } from './tasks.repository';
import { TasksService } from './tasks.service';
import { Clock } from '../../common/clock/clock';

/** Tasks by state, counted in Postgres at scrape time (one small GROUP BY per scrape). */
@Injectable()
export class TaskMetrics implements OnModuleInit {
  constructor(
    private readonly metrics: MetricsService,
    private readonly repository: TasksRepository,
    private readonly tasks: TasksService,
    private readonly clock: Clock,
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
  }
}
