import { Module } from '@nestjs/common';
import { JobsModule } from '../../common/jobs/jobs.module';
import { NetworkModule } from '../../network/network.module';
import { DatasetDownloadService } from './dataset-download.service';
import { DatasetParquetService } from './dataset-parquet.service';
import { TaskDatasetsController } from './task-datasets.controller';
import { TaskMetrics } from './task-metrics';
import { TaskLifecycleRepository } from './task-lifecycle.repository';
import { TaskLifecycleService } from './task-lifecycle.service';
import { TasksController } from './tasks.controller';
import { TasksRepository } from './tasks.repository';
import { TasksService } from './tasks.service';

@Module({
  imports: [NetworkModule, JobsModule],
  // In this order: the OpenAPI document lists the download after the task's other operations.
  controllers: [TasksController, TaskDatasetsController],
  providers: [
    TasksService,
    TasksRepository,
    TaskLifecycleService,
    TaskLifecycleRepository,
    DatasetDownloadService,
    DatasetParquetService,
    TaskMetrics,
  ],
  exports: [TasksService, TaskLifecycleService],
})
export class TasksModule {}
