import { createHash } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { Logger } from '@nestjs/common';
import { Clock } from '../../common/clock/clock';
import { TaskLifecycleRepository } from './task-lifecycle.repository';
import { datasetPath } from './dataset-path';
import { PRUNE_GRACE_MS, TaskPruner, UNPRUNABLE_RETRY_MS } from './task-pruner';
import { testConfig } from '../../../test/support/test-config';

describe('TaskPruner', () => {
  /** A repository with no task due and one completed at `completedAt` (null: none with items). */
  const pruner = (clock: Clock, completedAt: Date | null) => {
    const repository = {
      completedWithItems: jest.fn(() => Promise.resolve([])),
      earliestCompletedWithItems: jest.fn(() => Promise.resolve(completedAt)),
    };
    const logger = { log: jest.fn(), warn: jest.fn() } as unknown as Logger;
    const config = testConfig({ dataDir: '/nonexistent' });
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

  // A file back from a restore, or a volume back from an outage, left its task's items for the
  // life of the process (a state audit): looked at again a day later.
  it('looks again a day later at a task whose file was not as recorded, and prunes it then', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'task-pruner-'));
    try {
      const clock = new Clock();
      const file = datasetPath(dataDir, 'restored');
      const task = {
        id: 'restored',
        dataset_file: file,
        dataset_bytes: '4',
        dataset_sha256: createHash('sha256').update('rows').digest('hex'),
      };
      const repository = {
        completedWithItems: jest.fn((skip: readonly string[]) =>
          Promise.resolve(skip.includes(task.id) ? [] : [task]),
        ),
        earliestCompletedWithItems: jest.fn(() => Promise.resolve(null)),
        deleteCompletedItems: jest.fn(() => Promise.resolve(3)),
      };
      const logger = { log: jest.fn(), warn: jest.fn() } as unknown as Logger;
      const taskPruner = new TaskPruner(
        repository as unknown as TaskLifecycleRepository,
        clock,
        testConfig({ dataDir }),
        logger,
        () => false,
      );

      expect(await taskPruner.pruneCompletedItems()).toBe(0);
      mkdirSync(dirname(file), { recursive: true });
      writeFileSync(file, 'rows');
      clock.advance(UNPRUNABLE_RETRY_MS - 60_000);
      expect(await taskPruner.pruneCompletedItems()).toBe(0);
      expect(repository.completedWithItems).toHaveBeenLastCalledWith(
        ['restored'],
        expect.any(Date),
        10,
      );

      clock.advance(60_000);
      // The idle hour a pass that found nothing started is over too.
      const now = performance.now();
      jest.spyOn(performance, 'now').mockReturnValue(now + 2 * 3_600_000);
      expect(await taskPruner.pruneCompletedItems()).toBe(1);
      expect(repository.deleteCompletedItems).toHaveBeenCalledWith('restored');
    } finally {
      jest.restoreAllMocks();
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
