import { Logger } from '@nestjs/common';
import { Clock } from '../../common/clock/clock';
import { AppConfig } from '../../config/app-config';
import { TaskLifecycleRepository } from './task-lifecycle.repository';
import { PRUNE_GRACE_MS, TaskPruner } from './task-pruner';

describe('TaskPruner', () => {
  /** A repository with no task due and one completed at `completedAt` (null: none with items). */
  const pruner = (clock: Clock, completedAt: Date | null) => {
    const repository = {
      completedWithItems: jest.fn(() => Promise.resolve([])),
      earliestCompletedWithItems: jest.fn(() => Promise.resolve(completedAt)),
    };
    const logger = { log: jest.fn(), warn: jest.fn() } as unknown as Logger;
    const config = { dataDir: '/nonexistent' } as AppConfig;
    const taskPruner = new TaskPruner(
      repository as unknown as TaskLifecycleRepository,
      clock,
      config,
      logger,
      () => false,
    );
    return { taskPruner, repository };
  };

  // Looking every pass would read the completed tasks each minute; looking only hourly kept a
  // task completed just after an empty pass for two hours (a soak audit's finding).
  it('after a pass that found none due, looks again only once the earliest task with items left is due', async () => {
    const clock = new Clock();
    const completedAt = new Date(clock.now().getTime() - 60_000);
    const { taskPruner, repository } = pruner(clock, completedAt);

    await taskPruner.pruneCompletedItems();
    expect(repository.completedWithItems).toHaveBeenCalledTimes(1);

    clock.advance(PRUNE_GRACE_MS - 120_000);
    await taskPruner.pruneCompletedItems();
    expect(repository.completedWithItems).toHaveBeenCalledTimes(1);

    clock.advance(60_000);
    await taskPruner.pruneCompletedItems();
    expect(repository.completedWithItems).toHaveBeenCalledTimes(2);
  });

  it('with no task holding items, does not look again before an hour has passed', async () => {
    const clock = new Clock();
    const { taskPruner, repository } = pruner(clock, null);

    await taskPruner.pruneCompletedItems();
    clock.advance(10 * PRUNE_GRACE_MS);
    await taskPruner.pruneCompletedItems();
    expect(repository.completedWithItems).toHaveBeenCalledTimes(1);
  });
});
