import { Injectable, OnModuleInit } from '@nestjs/common';
import { AppConfig } from '../../config/app-config';
import { InjectConfig } from '../../config/config.module';
import { loadDefaultDesirabilities } from './default-desirabilities';
import { JobView } from './desirability.types';

/** The network owner's default list (DEFAULT_DESIRABILITIES_FILE), read once at start. */
@Injectable()
export class OwnerDesirabilities implements OnModuleInit {
  jobs: JobView[] = [];

  constructor(@InjectConfig() private readonly config: AppConfig) {}

  async onModuleInit(): Promise<void> {
    this.jobs = await loadDefaultDesirabilities(this.config.defaultDesirabilitiesFile);
  }
}
