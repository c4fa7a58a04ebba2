import { Logger } from '@nestjs/common';
import { DesirabilityService } from '../../src/modules/desirability/desirability.service';
import { JobView } from '../../src/modules/desirability/desirability.types';
import { NetworkAggregateService } from '../../src/modules/desirability/network-aggregate.service';
import { NetworkVotesService } from '../../src/modules/desirability/network-votes.service';
import {
  NetworkVotesRepository,
  StoredNetworkAggregate,
} from '../../src/modules/desirability/network-votes.repository';
import { MediumDatabase, openMediumDatabase } from '../support/medium-database';
import { expectDeclaredJobOrder } from '../support/job-order';
import { testConfig } from '../support/test-config';

/** Every aggregate of this spec is stored at one instant, as with a clock that stands still. */
const COMPUTED_AT = new Date('2026-11-30T12:00:00Z');
const jobs = (count: number, label = '#tao'): JobView[] =>
  Array.from({ length: count }, (_, index) => ({
    id: `job-${index}`,
    weight: 1 / count,
    params: {
      platform: 'x',
      label: `${label}-${index}`,
      keyword: null,
      post_start_datetime: null,
      post_end_datetime: null,
    },
  }));
const aggregate = (list: JobView[]): StoredNetworkAggregate => ({
  computedAt: COMPUTED_AT,
  block: 4_200,
  jobs: list,
  validators: [{ hotkey: 'a', stake: 100, share: 1, sha: 'a'.repeat(40), block: 10, jobs: 1 }],
  skipped: [{ hotkey: 'b', reason: 'no commitment' }],
});

/**
 * The stored network aggregate as requests read it, against Postgres (a database of its own:
 * the aggregate is one row). A request reads the row's version; the jobs only when it changed.
 */
describe(`${NetworkAggregateService.name} reads of the stored aggregate`, () => {
  let medium: MediumDatabase;
  let repository: NetworkVotesRepository;
  let service: NetworkAggregateService;
  let queries: string[];

  beforeAll(async () => {
    medium = await openMediumDatabase({ own: 'netaggregate' });
    repository = new NetworkVotesRepository(medium.dataSource);
  });
  const newService = () =>
    new NetworkAggregateService(
      { enabled: true } as never,
      {} as never,
      repository,
      {} as never,
      {} as never,
      { now: () => COMPUTED_AT } as never,
      {} as never,
      testConfig({ desirability: { syncIntervalMs: 60_000 } }),
    );
  afterAll(() => medium.close());
  // The aggregate is one row, and the service remembers the version it read: each test starts
  // from none stored and a service of its own, in any order.
  beforeEach(async () => {
    await medium.dataSource.query('DELETE FROM network_desirabilities');
    service = newService();
  });
  beforeEach(() => {
    queries = [];
    const query = medium.dataSource.query.bind(medium.dataSource);
    jest.spyOn(medium.dataSource, 'query').mockImplementation((sql: string, ...rest) => {
      queries.push(sql);
      return query(sql, ...rest);
    });
  });
  afterEach(() => jest.restoreAllMocks());
  /** The queries that read `column`. */
  const reads = (column: string) =>
    queries.filter((sql) => /^\s*SELECT\b/.test(sql) && new RegExp(`\\b${column}\\b`).test(sql));

  it('reads the jobs once per stored aggregate, however many requests read them', async () => {
    expect(await service.storedJobs()).toBeUndefined();
    await repository.saveAggregate(aggregate(jobs(3)));

    const first = await service.storedJobs();
    const [second, third] = await Promise.all([service.storedJobs(), service.storedJobs()]);

    expect(first).toMatchObject({ computedAt: COMPUTED_AT, jobs: jobs(3) });
    expect(second).toBe(first);
    expect(third).toBe(first);
    expect(reads('jobs')).toHaveLength(1);

    // Stored again at the same instant, as a fake clock would: still another aggregate.
    await repository.saveAggregate(aggregate(jobs(2, '#btc')));
    const [fourth, fifth] = await Promise.all([service.storedJobs(), service.storedJobs()]);
    expect(fourth).toMatchObject({ computedAt: COMPUTED_AT, jobs: jobs(2, '#btc') });
    expect(fifth).toBe(fourth);
    expect(reads('jobs')).toHaveLength(2);
  });

  // jsonb keeps keys shorter first (`id, params, weight`; `label, keyword, platform, …`): the
  // network aggregate was listed so, where a local one lists them as declared.
  it('reads the jobs with their keys in the declared order, as the local aggregate lists them', async () => {
    await repository.saveAggregate(aggregate(jobs(2)));
    const stored = await service.storedJobs();
    expect(stored!.jobs).toHaveLength(2);
    for (const job of stored!.jobs) {
      expectDeclaredJobOrder(job);
    }
  });

  it('reads the status without the jobs, once per stored aggregate', async () => {
    await repository.saveAggregate(aggregate(jobs(3)));

    const first = await service.storedStatus();
    expect(await service.storedStatus()).toBe(first);
    expect(first).toEqual({
      version: expect.any(String),
      computedAt: COMPUTED_AT,
      block: 4_200,
      validators: aggregate([]).validators,
      skipped: aggregate([]).skipped,
    });
    expect(reads('jobs')).toEqual([]);
    expect(reads('validators')).toHaveLength(1);
  });

  // Made at every request, a 100,000-job aggregate's legacy labels took seconds each.
  it('answers legacy pages of one stored aggregate from labels made once', async () => {
    await repository.saveAggregate(aggregate(jobs(2_000)));
    // Only the network aggregate's path is taken: the votes, tasks and publication are not.
    const unused = {} as never;
    const desirability = new DesirabilityService(
      unused,
      unused,
      unused,
      { now: () => COMPUTED_AT } as never,
      unused,
      unused,
      unused,
      { enabled: true } as never,
      service,
      testConfig(),
    );
    const page = (offset: number) =>
      desirability.get({ format: 'legacy', offset, limit: 10 } as never);
    await page(0);

    const stringify = jest.spyOn(JSON, 'stringify');
    const second = await page(10);

    expect(second.total).toBe(2_000);
    expect(second.items).toEqual([
      {
        source_name: 'x',
        label_weights: Object.fromEntries(
          jobs(2_000)
            .map((job) => job.params.label!)
            .sort()
            .slice(10, 20)
            .map((label) => [label, 0.0005]),
        ),
      },
    ]);
    // legacyLabels keys each job's label with JSON.stringify.
    expect(stringify.mock.calls.length).toBeLessThan(100);
  });

  // V8's message for it quoted the file cut inside a surrogate pair: jsonb refused the
  // aggregate at every run while the commitment stayed on chain.
  it('stores the aggregate when a validator’s file is not JSON, naming it among the skipped', async () => {
    const sha = 'c'.repeat(40);
    const config = testConfig({
      desirability: { syncIntervalMs: 60_000 },
      network: { validatorMinStake: 1000 },
    });
    const votes = new NetworkVotesService(
      {} as never,
      repository,
      {
        preferencesAt: () =>
          Promise.resolve({ kind: 'file', text: `[{"keyword": ${'🚀'.repeat(20)}}]` }),
      } as never,
      config,
    );
    const computing = new NetworkAggregateService(
      votes,
      { all: () => Promise.resolve([{ hotkey: 'broken', block: 12, sha }]) } as never,
      repository,
      {
        validatorStakes: () => new Map([['broken', 5000]]),
        metagraphStatus: () => Promise.resolve({ stored: { block: 4_300 } }),
      } as never,
      { jobs: [] } as never,
      { now: () => COMPUTED_AT } as never,
      { runOnce: (_name: string, _ms: number, run: () => Promise<unknown>) => run() } as never,
      config,
    );

    jest.spyOn(Logger.prototype, 'log').mockImplementation(() => undefined);
    await computing.runIfDue();

    expect(await service.storedStatus()).toMatchObject({
      block: 4_300,
      validators: [],
      skipped: [
        {
          hotkey: 'broken',
          sha,
          block: 12,
          reason: `validator_preferences/broken.json at ${sha} is not valid JSON`,
        },
      ],
    });
  });
});
