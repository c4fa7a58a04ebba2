import { ConflictException, Logger, NotFoundException } from '@nestjs/common';
import { EntityManager } from 'typeorm';
import { Clock } from '../../common/clock/clock';
import { TaskJob, TaskRow } from './task.types';
import { TasksRepository } from './tasks.repository';
import { TasksService, windowAfterLifeNote } from './tasks.service';
import { testConfig } from '../../../test/support/test-config';

const NOW = new Date('2026-01-15T12:00:00Z');

const JOB: TaskJob = {
  id: 'btc-etf',
  platform: 'x',
  label: '#bitcoin',
  keyword: 'etf',
  postStart: null,
  postEnd: null,
};

/** The task JOB registered a day ago, in `state`. */
const registered = (state: TaskRow['state']): TaskRow =>
  ({
    id: JOB.id,
    platform: JOB.platform,
    label: JOB.label,
    keyword: JOB.keyword,
    post_start: null,
    post_end: null,
    state,
    expires_at: new Date(NOW.getTime() + 6 * 24 * 3600 * 1000),
  }) as TaskRow;

/** The task JOB as stored, registered eight days ago (so expired a day ago), in `state`. */
const stored = (state: TaskRow['state']): TaskRow => ({
  ...registered(state),
  registered_at: new Date(NOW.getTime() - 8 * 24 * 3600 * 1000),
  expires_at: new Date(NOW.getTime() - 24 * 3600 * 1000),
  registered_by: '5Hotkey',
  items_collected: 120,
  collections: 168,
  last_collected_at: null,
  completed_at: null,
  failure_reason: 'ENOSPC: no space left on device',
  network_block: null,
});

/** The service over a repository holding `existing`. */
function setUp(existing: TaskRow[]) {
  const repository = {
    findByIds: jest.fn(() => Promise.resolve(existing)),
    countActiveBy: jest.fn(() => Promise.resolve(0)),
    insertNew: jest.fn((jobs: TaskJob[]) => Promise.resolve(jobs.map((job) => job.id))),
    findById: jest.fn((): Promise<TaskRow | undefined> => Promise.resolve(undefined)),
    recompileFailed: jest.fn((): Promise<TaskRow | undefined> => Promise.resolve(undefined)),
  };
  const service = new TasksService(
    repository as unknown as TasksRepository,
    { now: () => NOW } as Clock,
    testConfig({ tasks: { collectIntervalMs: 3_600_000, tickMs: 60_000 } }),
  );
  return { service, repository };
}

describe(TasksService.name, () => {
  const manager = {} as EntityManager;

  // Such a task completed with an empty dataset, said nowhere (a simulated-month audit's finding).
  it('names the tasks whose post window begins after their life ends, new or registered', async () => {
    const day = 24 * 3600 * 1000;
    const at = (days: number) => new Date(NOW.getTime() + days * day);
    const { service } = setUp([{ ...registered('active'), post_start: at(6.5) }]);
    const jobs: TaskJob[] = [
      // Registered a day ago: it ends in 6 days.
      { ...JOB, postStart: at(6.5) },
      { ...JOB, id: 'later', postStart: at(7.5) },
      { ...JOB, id: 'within', postStart: at(6.9) },
    ];
    const registration = await service.register('5Hotkey', jobs, 10, manager, NOW);
    expect(registration).toMatchObject({ registered: ['later', 'within'] });
    expect(registration.windowAfterLife).toEqual(['btc-etf', 'later']);
    expect(windowAfterLifeNote(registration.windowAfterLife!)).toBe(
      "; the post windows of tasks 'btc-etf', 'later' begin after their 7 days end: a task is collected only while it runs, so such a dataset holds no posts",
    );
    expect(windowAfterLifeNote([])).toBe('');
  });

  it('keeps a task submitted again as it was registered', async () => {
    const { service, repository } = setUp([registered('active')]);
    expect(await service.register('5Hotkey', [JOB], 10, manager, NOW)).toEqual({
      registered: [],
      conflicts: [],
      windowAfterLife: [],
    });
    expect(repository.insertNew).toHaveBeenCalledWith(
      [],
      '5Hotkey',
      NOW,
      expect.any(Date),
      manager,
    );
  });

  // The keyword narrows the label: the same label without it is another task.
  it('refuses another task under a known id, a different keyword included', async () => {
    const { service, repository } = setUp([registered('active')]);
    expect(
      await service.register('5Hotkey', [{ ...JOB, keyword: null }], 10, manager, NOW),
    ).toEqual({
      registered: [],
      conflicts: [
        { index: 0, message: "task id 'btc-etf' is already registered for a different task" },
      ],
    });
    expect(repository.insertNew).not.toHaveBeenCalled();
  });

  // Its dataset is compiled (or failed): submitted again, it would never collect.
  it.each(['completed', 'failed'] as const)(
    'refuses the id of a %s task, to be submitted under a new id',
    async (state) => {
      const { service, repository } = setUp([registered(state)]);
      expect(await service.register('5Hotkey', [JOB], 10, manager, NOW)).toEqual({
        registered: [],
        conflicts: [
          {
            index: 0,
            message: `task 'btc-etf' has ended (${state}); submit it under a new id to run it again`,
          },
        ],
      });
      expect(repository.insertNew).not.toHaveBeenCalled();
    },
  );

  // An accelerated-time audit: until the lifecycle's next pass, an expired task is still
  // `active`, and its 422 said "has ended (active)".
  it('refuses the id of a task expired and not yet compiling, saying when it expired', async () => {
    const { service } = setUp([
      { ...registered('active'), expires_at: new Date(NOW.getTime() - 3000) },
    ]);
    expect(await service.register('5Hotkey', [JOB], 10, manager, NOW)).toEqual({
      registered: [],
      conflicts: [
        {
          index: 0,
          message:
            "task 'btc-etf' has ended (expired at 2026-01-15T11:59:57.000Z); submit it under a new id to run it again",
        },
      ],
    });
  });

  // One 422 names every job refused: those the caller found, and the others' own conflicts.
  it("answers the caller's conflicts with the others' in order, checking the rest alone", async () => {
    const { service, repository } = setUp([registered('completed')]);
    const other = { ...JOB, id: 'fresh', keyword: 'spot' };
    const found = [
      { index: 2, message: 'the caller refused this one' },
      { index: null, message: 'the whole submission is too large' },
    ];
    // Job 2 repeats job 0's id: alone it would be "also given"; refused by the caller, it is not.
    const jobs = [JOB, other, { ...JOB, keyword: 'other' }];
    expect(await service.register('5Hotkey', jobs, 10, manager, NOW, found)).toEqual({
      registered: [],
      conflicts: [
        found[1],
        {
          index: 0,
          message: "task 'btc-etf' has ended (completed); submit it under a new id to run it again",
        },
        found[0],
      ],
    });
    expect(repository.findByIds).toHaveBeenCalledWith(['btc-etf', 'fresh'], manager);
    expect(repository.insertNew).not.toHaveBeenCalled();
  });

  // What the caller found alone still registers nothing.
  it('registers nothing when only the caller found a conflict', async () => {
    const { service, repository } = setUp([]);
    const found = [{ index: 0, message: 'refused' }];
    expect(await service.register('5Hotkey', [JOB], 10, manager, NOW, found)).toEqual({
      registered: [],
      conflicts: found,
    });
    expect(repository.insertNew).not.toHaveBeenCalled();
    expect(repository.countActiveBy).not.toHaveBeenCalled();
  });

  // A legacy label's running generation may be the id another job of the submission gives:
  // registered, the two jobs would be one row, the second job's params silently dropped.
  it('refuses an id given to two jobs of one submission, at the later job, registering nothing', async () => {
    const { service, repository } = setUp([]);
    const jobs = [JOB, { ...JOB, id: 'fresh', keyword: 'spot' }, { ...JOB, keyword: 'other' }];
    expect(await service.register('5Hotkey', jobs, 10, manager, NOW)).toEqual({
      registered: [],
      conflicts: [
        {
          index: 2,
          message: "task id 'btc-etf' is also given to another job of this submission",
        },
      ],
    });
    expect(repository.insertNew).not.toHaveBeenCalled();
  });

  describe('recompile', () => {
    let logged: jest.SpyInstance;
    beforeEach(() => {
      logged = jest.spyOn(Logger.prototype, 'log').mockImplementation(() => undefined);
    });
    afterEach(() => jest.restoreAllMocks());

    it('answers the task sent back to compiling, as getTask shows it, and logs the action', async () => {
      const { service, repository } = setUp([]);
      repository.recompileFailed.mockResolvedValue(stored('compiling'));
      const answer = await service.recompile('btc-etf');
      expect(answer).toMatchObject({
        id: 'btc-etf',
        state: 'compiling',
        failure_reason: 'ENOSPC: no space left on device',
      });
      repository.findById.mockResolvedValue(stored('compiling'));
      expect(answer).toEqual(await service.get('btc-etf'));
      expect(repository.recompileFailed).toHaveBeenCalledWith('btc-etf');
      expect(logged).toHaveBeenCalledTimes(1);
      expect(logged).toHaveBeenCalledWith(
        { task_id: 'btc-etf' },
        'task btc-etf: sent back to compiling by the master key (recompile)',
      );
    });

    it('refuses an unknown id with the 404 of getTask, and logs nothing', async () => {
      const { service, repository } = setUp([]);
      await expect(service.recompile('nope')).rejects.toThrow(
        new NotFoundException("Task 'nope' not found"),
      );
      repository.recompileFailed.mockClear();
      await expect(service.recompile('no\u0000pe')).rejects.toThrow(NotFoundException);
      // Postgres text cannot hold U+0000: asked, it would answer the request a 500.
      expect(repository.recompileFailed).not.toHaveBeenCalled();
      expect(logged).not.toHaveBeenCalled();
    });

    it.each(['active', 'compiling', 'completed'] as const)(
      'refuses a %s task with a 409 naming its state',
      async (state) => {
        const { service, repository } = setUp([]);
        repository.findById.mockResolvedValue(stored(state));
        await expect(service.recompile('btc-etf')).rejects.toThrow(
          new ConflictException(`Task 'btc-etf' is ${state}; only a failed task can be recompiled`),
        );
        expect(logged).not.toHaveBeenCalled();
      },
    );

    // Stored before parseId refused control characters: quoted as escapes, as a 404 quotes them.
    it('quotes the control characters of a stored id in its 409 as escapes', async () => {
      const { service, repository } = setUp([]);
      repository.findById.mockResolvedValue({ ...stored('active'), id: 'btc\u001b[31m\u2028' });
      await expect(service.recompile('btc\u001b[31m\u2028')).rejects.toThrow(
        new ConflictException(
          "Task 'btc\\u001b[31m\\u2028' is active; only a failed task can be recompiled",
        ),
      );
    });

    // Read failed after the UPDATE missed it: it failed (again) between the two statements.
    it('tries again when the task failed between its update and its read', async () => {
      const { service, repository } = setUp([]);
      repository.findById.mockResolvedValueOnce(stored('failed'));
      repository.recompileFailed
        .mockResolvedValueOnce(undefined)
        .mockResolvedValueOnce(stored('compiling'));
      expect((await service.recompile('btc-etf')).state).toBe('compiling');
      expect(repository.recompileFailed).toHaveBeenCalledTimes(2);
    });
  });

  // Postgres text cannot hold U+0000: asked, it would fail the request with a 500.
  it('finds no task for an id holding U+0000 without asking the database', async () => {
    const { service, repository } = setUp([]);
    await expect(service.find('btc\u0000etf')).rejects.toThrow(NotFoundException);
    expect(repository.findById).not.toHaveBeenCalled();
  });

  // Cut by UTF-16 units, an emoji at the cut came out as half a surrogate pair in the JSON body,
  // which strict parsers refuse (an audit's finding).
  it('quotes a long unknown id by its first 40 characters, never half of one', async () => {
    const { service } = setUp([]);
    const id = `a${'😀'.repeat(45)}`;
    await expect(service.find(id)).rejects.toThrow(NotFoundException);
    await expect(service.find(id)).rejects.toMatchObject({
      message: `Task 'a${'😀'.repeat(39)}…' not found`,
    });
    const short = `b${'😀'.repeat(39)}`;
    await expect(service.find(short)).rejects.toThrow(`Task '${short}' not found`);
  });
});
