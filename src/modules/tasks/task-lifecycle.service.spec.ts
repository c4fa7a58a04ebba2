import { Clock } from '../../common/clock/clock';
import { JobRunner } from '../../common/jobs/job-runner';
import { AppConfig } from '../../config/app-config';
import { NetworkService } from '../../network/network.service';
import { NetworkQueryResult } from '../../network/query-result';
import { DatasetParquetService } from './dataset-parquet.service';
import { TaskLifecycleService } from './task-lifecycle.service';
import { TaskRow } from './task.types';
import { TaskLifecycleRepository } from './task-lifecycle.repository';

const NOW = new Date('2026-01-15T12:00:00Z');

const TASK = {
  id: 'bitcoin',
  platform: 'x',
  label: '#bitcoin',
  keyword: null,
  post_start: null,
  post_end: null,
  collect_head: null,
  collect_cursor: null,
  collect_floor: null,
  collect_back_next: false,
} as unknown as TaskRow;

/** What a live round answers when every call failed: here, abandoned by the shutdown. */
const ABANDONED: NetworkQueryResult = {
  items: [],
  error: 'Every queried miner failed',
  origin: 'live',
  minersQueried: 3,
  minersResponded: 0,
  minersEmpty: 0,
  minersPassedChecks: 0,
  minersFailed: { count: 3, reasons: { shutdown: 3 } },
  itemsDroppedInvalid: 0,
  consensus: 0,
  hedged: 0,
  deadlineReached: false,
};

/** The service with one due task whose collection's query answers when the test says. */
function setUp() {
  let answer: (result: NetworkQueryResult) => void = () => undefined;
  const network = {
    query: jest.fn(() => new Promise<NetworkQueryResult>((resolve) => (answer = resolve))),
  };
  const repository = {
    dueForCollection: jest.fn(() => Promise.resolve([TASK])),
    recordCollectionFailure: jest.fn(() => Promise.resolve()),
  };
  const config = {
    tasks: {
      collectIntervalMs: 3_600_000,
      collectConcurrency: 1,
      collectPerMinute: 60,
      collectLimit: 100,
      tickMs: 60_000,
    },
  } as AppConfig;
  const service = new TaskLifecycleService(
    repository as unknown as TaskLifecycleRepository,
    network as unknown as NetworkService,
    {} as JobRunner,
    { now: () => NOW } as Clock,
    config,
    {} as DatasetParquetService,
  );
  const queried = async () => {
    while (network.query.mock.calls.length === 0) await new Promise(setImmediate);
  };
  return { service, repository, queried, answer: (result: NetworkQueryResult) => answer(result) };
}

describe(TaskLifecycleService.name, () => {
  it('counts a collection whose every miner failed as a failure of the task', async () => {
    const { service, repository, queried, answer } = setUp();
    const pass = service.collectDue(1);
    await queried();
    answer(ABANDONED);
    await pass;
    expect(repository.recordCollectionFailure).toHaveBeenCalledWith(TASK.id, NOW);
  });

  it('does not count a collection cut short by shutdown as a failure of the task', async () => {
    const { service, repository, queried, answer } = setUp();
    const pass = service.collectDue(1);
    await queried();
    // Shutdown: the service stops, then the miner client abandons the calls in flight.
    service.onModuleDestroy();
    answer(ABANDONED);
    await pass;
    expect(repository.recordCollectionFailure).not.toHaveBeenCalled();
  });
});
