import type { Response } from 'express';
import { TasksController } from './tasks.controller';
import { TasksService } from './tasks.service';

describe(TasksController.name, () => {
  // The documented defaults (limit 100, offset 0): a pipeline that asks for no page gets these.
  it('lists the first 100 tasks when no page is asked for, the total over every page in X-Total-Count', async () => {
    const list = jest.fn(() => Promise.resolve({ page: { tasks: [] }, total: 250 }));
    const controller = new TasksController({ list } as unknown as TasksService);
    const setHeader = jest.fn();

    await controller.list({}, { setHeader } as unknown as Response);

    expect(list).toHaveBeenCalledWith({ state: undefined, completedAfter: undefined }, 100, 0);
    expect(setHeader).toHaveBeenCalledWith('X-Total-Count', '250');
  });

  it("answers a recompile with the service's task", async () => {
    const task = { id: 'tao-x', state: 'compiling' };
    const recompile = jest.fn(() => Promise.resolve(task));
    const controller = new TasksController({ recompile } as unknown as TasksService);

    expect(await controller.recompile('tao-x')).toBe(task);
    expect(recompile).toHaveBeenCalledWith('tao-x');
  });
});
