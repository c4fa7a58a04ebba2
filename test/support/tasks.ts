import { INestApplication } from '@nestjs/common';
import { TasksService } from '../../src/modules/tasks/tasks.service';

/**
 * Registers one scraping task as a validator's submission would (atomically, under the
 * registration lock), without going through HTTP: for tests about what happens to tasks.
 */
export function registerTask(
  app: INestApplication,
  hotkey: string,
  id: string,
  label: string,
  platform: 'x' | 'reddit' = 'x',
  window: { postStart: Date | null; postEnd: Date | null } = { postStart: null, postEnd: null },
): Promise<unknown> {
  const tasks = app.get(TasksService);
  return tasks.registering((manager) =>
    tasks.register(hotkey, [{ id, platform, label, keyword: null, ...window }], 1000, manager),
  );
}
