import {
  BeforeApplicationShutdown,
  Injectable,
  Logger,
  OnApplicationBootstrap,
  OnModuleDestroy,
} from '@nestjs/common';
import { Clock } from '../../common/clock/clock';
import { JobRunner } from '../../common/jobs/job-runner';
import { PeriodicJob } from '../../common/jobs/periodic-job';
import { MetricsService } from '../../common/metrics/metrics.service';
import { AppConfig } from '../../config/app-config';
import { InjectConfig } from '../../config/config.module';
import { NetworkService } from '../../network/network.service';
import { removeStalePartials } from './atomic-file';
import { datasetsDirectory } from './dataset-path';
import { DatasetParquetService } from './dataset-parquet.service';
import { TaskCollector } from './task-collector';
import { TaskCompiler } from './task-compiler';
import { TaskPruner } from './task-pruner';
import { TaskLifecycleRepository } from './task-lifecycle.repository';

export const TASK_LIFECYCLE_JOB = 'task-lifecycle';

/**
 * Moves tasks through their lives: while `active`, collects matching data from miners every
 * TASK_COLLECT_INTERVAL through the network's on-demand machinery (same checks, dedupe by uri);
 * at expiry marks them `compiling`, writes the dataset and marks them `completed` (or `failed`
 * after repeated errors). States live in Postgres, so a restart resumes where it stopped: a task
 * left `compiling` is compiled again from scratch. One replica runs it at a time.
 *
 * This is the scheduler; the three jobs of a pass are in their own files: task-collector.ts,
 * task-compiler.ts and task-pruner.ts. They log under this service's name.
 */
@Injectable()
export class TaskLifecycleService
  implements OnApplicationBootstrap, OnModuleDestroy, BeforeApplicationShutdown
{
  private readonly logger = new Logger(TaskLifecycleService.name);
  private readonly job: PeriodicJob<{ collected: number; compiled: number }>;
  private stopping = false;
  private readonly collector: TaskCollector;
  private readonly compiler: TaskCompiler;
  private readonly pruner: TaskPruner;
  /** What looks at each pass whether a task it depends on has ended (onEachPass). */
  private readonly passListeners: (() => Promise<void>)[] = [];

  constructor(
    repository: TaskLifecycleRepository,
    network: NetworkService,
    jobs: JobRunner,
    clock: Clock,
    @InjectConfig() private readonly config: AppConfig,
    parquet: DatasetParquetService,
    metrics: MetricsService,
  ) {
    const stopping = () => this.stopping;
    this.collector = new TaskCollector(
      repository,
      network,
      clock,
      config,
      this.logger,
      stopping,
      metrics,
    );
    this.compiler = new TaskCompiler(
      repository,
      parquet,
      clock,
      config,
      this.logger,
      stopping,
      metrics,
    );
    this.pruner = new TaskPruner(repository, clock, config, this.logger, stopping);
    this.job = new PeriodicJob(
      jobs,
      TASK_LIFECYCLE_JOB,
      config.tasks.tickMs,
      () => this.runOnce(),
      this.logger,
    );
  }

  onApplicationBootstrap(): void {
    this.job.start();
  }

  onModuleDestroy(): void {
    this.stopping = true;
    this.job.stop();
  }

  /** After the miner client aborted its calls (onModuleDestroy), a running pass ends quickly. */
  beforeApplicationShutdown(): Promise<void> {
    return this.job.settled();
  }

  /**
   * Runs `listener` at each pass, before its compiles: tasks end as their seven days run out,
   * and what depends on a task's end (the published vote: StoredVotePublication) looks then.
   * Here, not in those modules' own timers: the pass runs on one replica at a time. A listener
   * says its own failures; it cannot fail the pass.
   */
  onEachPass(listener: () => Promise<void>): void {
    this.passListeners.push(listener);
  }

  /**
   * One pass: collect what is due, then tell the pass's listeners (onEachPass), then compile
   * what expired (also used by tests), then delete the stored items of tasks completed before
   * compiles did, then remove the partial files crashed writers left (compiles', and downloads'
   * Parquet rewrites').
   */
  async runOnce(): Promise<{ collected: number; compiled: number }> {
    const collected = await this.collectDue();
    for (const listener of this.passListeners) await listener();
    const compiled = await this.compileExpired();
    await this.pruneCompletedItems();
    // On the real clock: file times are the file system's, not the service's clock.
    await removeStalePartials(datasetsDirectory(this.config.dataDir), new Date());
    return { collected, compiled };
  }

  /**
   * Collects the due tasks, up to `budget` (a tick's worth by default): TaskCollector.collectDue.
   */
  collectDue(budget?: number): Promise<number> {
    return this.collector.collectDue(budget);
  }

  /** Compiles expired tasks for at most `budgetMs` of a pass: TaskCompiler.compileExpired. */
  compileExpired(budgetMs?: number): Promise<number> {
    return this.compiler.compileExpired(budgetMs);
  }

  /** Deletes the stored items their dataset file holds: TaskPruner.pruneCompletedItems. */
  pruneCompletedItems(limit?: number): Promise<number> {
    return this.pruner.pruneCompletedItems(limit);
  }
}
