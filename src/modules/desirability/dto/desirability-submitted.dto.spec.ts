import { EntityManager } from 'typeorm';
import { Clock } from '../../../common/clock/clock';
import { MetricsService } from '../../../common/metrics/metrics.service';
import { ValidatorIdentity } from '../../../network/bittensor/validator-identity';
import { PublicationRepository } from '../../publication/publication.repository';
import { PublicationService } from '../../publication/publication.service';
import { TasksService } from '../../tasks/tasks.service';
import { parseDesirabilityRequest } from '../desirability-parser';
import { DesirabilityRepository } from '../desirability.repository';
import { DesirabilityService } from '../desirability.service';
import { DESIRABILITY_REQUEST_EXAMPLE } from './desirability-request.dto';
import { DESIRABILITY_SUBMITTED_EXAMPLE } from './desirability-submitted.dto';
import { subtensorAt, testConfig } from '../../../../test/support/test-config';

/**
 * The OpenAPI document's answer to set_desirabilities is the one the service gives to the
 * document's request: built here by the service's own code (the database faked), so that the
 * example cannot say what the service never answers (a docs audit found a `not_published` id
 * the `tasks` did not list, and a `message` without the sentence that names it).
 */
describe('the DesirabilitySubmitted example', () => {
  it('is what the service answers to the DesirabilityRequest example', async () => {
    const manager = {} as EntityManager;
    const config = testConfig({
      netuid: 13,
      gravity: { repoUrl: 'ssh://git@github.com/o/r.git', branch: 'main' },
      network: { subtensor: subtensorAt('wss://node.example:443') },
      desirability: { maxActiveTasks: 1000 },
    });
    const identity = {
      hotkey: '5F4tQyWrhfGVcNhoqeiNsR6KjD4wMZ2kfhLj4oHYuyHbZAc3',
    } as ValidatorIdentity;
    // `tao-x` already registered; the other two new.
    const tasks = {
      registering: (work: (manager: EntityManager) => Promise<unknown>) => work(manager),
      findLabelTasks: () => Promise.resolve([]),
      findIds: () => Promise.resolve([]),
      register: (_hotkey: string, jobs: { id: string }[]) =>
        Promise.resolve({
          registered: jobs.map((job) => job.id).filter((id) => id !== 'tao-x'),
          conflicts: [],
        }),
      setWeights: () => Promise.resolve(),
      endedTaskIds: () => Promise.resolve(new Set<string>()),
    } as unknown as TasksService;
    const votes = {
      findVote: () => Promise.resolve(undefined),
      saveVote: () => Promise.resolve(),
      taskWeights: () => Promise.resolve([]),
    } as unknown as DesirabilityRepository;
    const queue = { find: () => Promise.resolve(undefined), enqueue: () => Promise.resolve() };
    const clock = new Clock();
    const publication = new PublicationService(
      queue as unknown as PublicationRepository,
      identity,
      tasks,
      clock,
      new MetricsService(),
      config,
    );
    const service = new DesirabilityService(
      votes,
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
    const parsed = parseDesirabilityRequest({ desirabilities: DESIRABILITY_REQUEST_EXAMPLE });
    if (!parsed.ok) throw new Error(JSON.stringify(parsed.errors));
    expect(await service.submit(parsed.value)).toEqual(DESIRABILITY_SUBMITTED_EXAMPLE);
  });
});
