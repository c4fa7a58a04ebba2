import { randomUUID } from 'node:crypto';
import { Clock } from '../../src/common/clock/clock';
import { MetricsService } from '../../src/common/metrics/metrics.service';
import { DesirabilityRepository } from '../../src/modules/desirability/desirability.repository';
import { DesirabilityService } from '../../src/modules/desirability/desirability.service';
import { parseDesirabilityRequest } from '../../src/modules/desirability/desirability-parser';
import { PublicationRepository } from '../../src/modules/publication/publication.repository';
import { PublicationService } from '../../src/modules/publication/publication.service';
import { TasksRepository } from '../../src/modules/tasks/tasks.repository';
import { TasksService } from '../../src/modules/tasks/tasks.service';
import { ValidatorIdentity } from '../../src/network/bittensor/validator-identity';
import { MediumDatabase, openMediumDatabase } from '../support/medium-database';
import { testConfig } from '../support/test-config';

/**
 * A task's weight (what collection goes by, heaviest first) with several hotkeys sharing one
 * database, as replicas with their own wallet hotkeys (BT_WALLET_*) do: the largest weight any current
 * vote gives the task, whoever registered it (docs/decisions.md, "Collection within a budget").
 */
describe('task weights across the votes of hotkeys sharing a database', () => {
  let medium: MediumDatabase;
  let tasksRepository: TasksRepository;

  beforeAll(async () => {
    medium = await openMediumDatabase();
    tasksRepository = new TasksRepository(medium.dataSource);
  });
  afterAll(() => medium.close());

  /** One replica's DesirabilityService, voting as `hotkey`; publication disabled. */
  const replica = (hotkey: string): DesirabilityService => {
    const config = testConfig({
      netuid: 13,
      gravity: { repoUrl: undefined, branch: 'main' },
      network: { subtensor: undefined },
      desirability: { maxActiveTasks: 100 },
    });
    const identity = { hotkey } as ValidatorIdentity;
    const clock = new Clock();
    const tasks = new TasksService(tasksRepository, clock, config);
    const publication = new PublicationService(
      new PublicationRepository(medium.dataSource),
      identity,
      tasks,
      clock,
      new MetricsService(),
      config,
    );
    return new DesirabilityService(
      new DesirabilityRepository(medium.dataSource),
      tasks,
      // No metagraph loaded: no standing to say anything of.
      { hotkeyCheck: () => null } as never,
      clock,
      identity,
      publication,
      undefined as never,
      undefined as never,
      undefined as never,
      config,
    );
  };
  const vote = (service: DesirabilityService, jobs: [id: string, weight: number][]) => {
    const parsed = parseDesirabilityRequest({
      desirabilities: jobs.map(([id, weight]) => ({
        id,
        weight,
        params: { platform: 'x', label: `#${id}` },
      })),
    });
    if (!parsed.ok) throw new Error(JSON.stringify(parsed.errors));
    return service.submit(parsed.value);
  };
  const weights = async (ids: string[]): Promise<Record<string, number>> => {
    const rows = await medium.dataSource.query<{ id: string; weight: number }[]>(
      'SELECT id, weight FROM scraping_tasks WHERE id = ANY($1::varchar[])',
      [ids],
    );
    return Object.fromEntries(rows.map((row) => [row.id, row.weight]));
  };

  it("keeps a task another hotkey's vote names weighted when its registrant drops it, or withdraws", async () => {
    const run = randomUUID().slice(0, 8);
    const [t1, t2, t3] = ['t1', 't2', 't3'].map((name) => `${name}-${run}`);
    const a = replica(`5A${run}`);
    const b = replica(`5B${run}`);

    await vote(a, [[t1, 1]]);
    await vote(b, [
      [t1, 1],
      [t2, 3],
    ]);
    expect(await weights([t1, t2])).toEqual({ [t1]: 1, [t2]: 0.75 });

    // A (t1's registrant) no longer names t1; B's vote still gives it 0.25.
    await vote(a, [[t3, 1]]);
    expect(await weights([t1, t2, t3])).toEqual({ [t1]: 0.25, [t2]: 0.75, [t3]: 1 });

    // B drops t1 too: no vote names it now.
    await vote(b, [[t2, 1]]);
    expect(await weights([t1, t2, t3])).toEqual({ [t1]: 0, [t2]: 1, [t3]: 1 });

    // B names t3 (A's) lighter than A does: the larger weight counts, whichever vote came last.
    await vote(b, [
      [t2, 3],
      [t3, 1],
    ]);
    expect(await weights([t2, t3])).toEqual({ [t2]: 0.75, [t3]: 1 });

    // A withdraws: t3 keeps the weight B's vote gives it.
    await vote(a, []);
    expect(await weights([t2, t3])).toEqual({ [t2]: 0.75, [t3]: 0.25 });

    await vote(b, []);
    expect(await weights([t1, t2, t3])).toEqual({ [t1]: 0, [t2]: 0, [t3]: 0 });
  });
});
