import { Module } from '@nestjs/common';
import { JobRunner } from './job-runner';
import { JobRunsRepository } from './job-runs.repository';

@Module({ providers: [JobRunner, JobRunsRepository], exports: [JobRunner] })
export class JobsModule {}
