import { Injectable, Logger, OnModuleInit } from '@nestjs/common';
import { MetricsService } from '../../common/metrics/metrics.service';
import { TASK_STATES } from './task.types';
import { TasksRepository } from './tasks.repository';

/** Tasks by state, counted in Postgres at scrape time (one small GROUP BY per scrape). */
@Injectable()
export class TaskMetrics implements OnModuleInit {
  private readonly logger = new Logger(TaskMetrics.name);

  constructor(
    private readonly metrics: MetricsService,
    private readonly repository: TasksRepository,
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
      (error) => this.logger.warn(`could not count tasks by state: ${error.message}`),
    );
  }
}
