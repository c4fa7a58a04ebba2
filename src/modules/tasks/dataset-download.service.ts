import { createReadStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import {
  ConflictException,
  Injectable,
  ServiceUnavailableException,
  StreamableFile,
} from '@nestjs/common';
import { DATASET_CONTENT_TYPE } from './task.mapper';
import { TasksService } from './tasks.service';

/** Streams completed datasets; never a file that is not recorded as complete. */
@Injectable()
export class DatasetDownloadService {
  constructor(private readonly tasks: TasksService) {}

  async open(id: string): Promise<{ file: StreamableFile; sha256: string }> {
    const task = await this.tasks.find(id);
    if (task.state !== 'completed' || !task.dataset_file || !task.dataset_sha256) {
      throw new ConflictException(
        `Task '${id}' is ${task.state}; its dataset is available once the task has completed`,
      );
    }
    const size = await stat(task.dataset_file).then(
      (info) => info.size,
      () => undefined,
    );
    if (size === undefined)
      throw new ServiceUnavailableException(
        `The dataset file of task '${id}' is missing on this server`,
      );
    const file = new StreamableFile(createReadStream(task.dataset_file), {
      type: DATASET_CONTENT_TYPE,
      length: size,
      disposition: `attachment; filename="${encodeURIComponent(id)}.jsonl.gz"`,
    });
    return { file, sha256: task.dataset_sha256 };
  }
}
