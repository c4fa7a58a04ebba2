import { Logger } from '@nestjs/common';
import { MetricsService } from '../common/metrics/metrics.service';
import type { SubtensorConnection } from './chain/subtensor-connection';
import type { HotkeyCheck, MinerCounts } from './network-status';
import type { MetagraphService } from './metagraph/metagraph.service';
import { NetworkMetrics } from './network-metrics';
import type { MinersRepository } from './miners.repository';
import type { NetworkService, SynapseBudgetLeft } from './network.service';

const COUNTS: MinerCounts = {
  total: 9,
  serving: 7,
  validators: 2,
  available: 4,
  addressRefused: 1,
};
const BUDGETS: SynapseBudgetLeft[] = [
  { synapse: 'OnDemandRequest', callsLeft: 30, minersWithoutCalls: 0 },
  { synapse: 'GetContentsByBuckets', callsLeft: 5, minersWithoutCalls: 3 },
];

interface World {
  counts?: () => MinerCounts;
  standing?: HotkeyCheck['standing'];
  readAt?: Date;
  block?: number;
  blockAdvancedAt?: Date;
  connection?: { isConnected: boolean } | null;
  newestSyncedAt?: Date;
}

/** NetworkMetrics on a real MetricsService, with what it reads faked. */
function setUp(world: World = {}) {
  const metrics = new MetricsService();
  const network = {
    countMiners: jest.fn(world.counts ?? (() => COUNTS)),
    budgetsLeft: jest.fn(() => Promise.resolve(BUDGETS)),
    indexFreshness: () => Promise.resolve({ newestSyncedAt: world.newestSyncedAt ?? null }),
  };
  const metagraph = {
    hotkeyCheck: () => (world.standing ? ({ standing: world.standing } as HotkeyCheck) : null),
  };
  const repository = {
    lastMetagraph: () =>
      Promise.resolve(
        world.readAt
          ? { readAt: world.readAt, block: world.block, blockAdvancedAt: world.blockAdvancedAt }
          : undefined,
      ),
  };
  const connection = world.connection === undefined ? { isConnected: true } : world.connection;
  new NetworkMetrics(
    metrics,
    metagraph as unknown as MetagraphService,
    repository as unknown as MinersRepository,
    connection as SubtensorConnection | null,
    network as unknown as NetworkService,
  ).onModuleInit();
  return { metrics, network };
}

/**
 * Every sample of one gateway_ metric, scraped now, as `label=value` keys (or '' without labels).
 */
async function samples(metrics: MetricsService, name: string): Promise<Record<string, number>> {
  const metric = metrics.registry.getSingleMetric(`gateway_${name}`);
  if (!metric) throw new Error(`no metric gateway_${name}`);
  const { values } = await metric.get();
  return Object.fromEntries(
    values.map(({ labels, value }) => [
      Object.entries(labels)
        .map(([label, text]) => `${label}=${String(text)}`)
        .join(','),
      value,
    ]),
  );
}

describe(NetworkMetrics.name, () => {
  it('exposes each count of the miners under its own state', async () => {
    const { metrics } = setUp();
    expect(await samples(metrics, 'miners')).toEqual({
      'state=total': 9,
      'state=serving': 7,
      'state=validators': 2,
      'state=available': 4,
      'state=address_refused': 1,
    });
  });

  it('keeps the last counts and logs a warning when they cannot be read', async () => {
    let counts = (): MinerCounts => COUNTS;
    const { metrics } = setUp({ counts: () => counts() });
    await samples(metrics, 'miners');
    const warn = jest.spyOn(Logger.prototype, 'warn').mockImplementation(() => undefined);
    counts = () => {
      throw new Error('metagraph unreadable');
    };
    try {
      expect(await samples(metrics, 'miners')).toMatchObject({ 'state=total': 9 });
      await metrics.scrape();
      expect(warn).toHaveBeenCalledWith(
        'could not read 1 gauge, left at their last values: metagraph unreadable (gateway_miners)',
      );
    } finally {
      warn.mockRestore();
    }
  });

  it("sets 1 on the hotkey's current standing only, and 0 on all before a metagraph", async () => {
    expect(await samples(setUp({ standing: 'no_permit' }).metrics, 'hotkey_standing')).toEqual({
      'standing=validator': 0,
      'standing=not_registered': 0,
      'standing=no_permit': 1,
      'standing=stake_too_low': 0,
    });
    const before = await samples(setUp().metrics, 'hotkey_standing');
    expect(Object.values(before)).toEqual([0, 0, 0, 0]);
  });

  // From the index every replica shares: a restarted replica says when the index was last
  // synced, where the in-process index_sync_last_completed gauge said 0 (a metrics audit).
  it("gives the newest miner index's sync time in Unix seconds, whoever synced it; 0 with none", async () => {
    const newestSyncedAt = new Date('2026-12-06T22:47:43.250Z');
    const { metrics } = setUp({ newestSyncedAt });
    expect(await samples(metrics, 'miner_index_newest_synced_timestamp_seconds')).toEqual({
      '': newestSyncedAt.getTime() / 1000,
    });
    expect(await samples(setUp().metrics, 'miner_index_newest_synced_timestamp_seconds')).toEqual({
      '': 0,
    });
  });

  it("gives the stored metagraph's read time in Unix seconds, 0 before any", async () => {
    const readAt = new Date('2026-11-30T12:00:00.500Z');
    const { metrics } = setUp({ readAt });
    expect(await samples(metrics, 'metagraph_last_read_timestamp_seconds')).toEqual({
      '': readAt.getTime() / 1000,
    });
    expect(await samples(setUp().metrics, 'metagraph_last_read_timestamp_seconds')).toEqual({
      '': 0,
    });
  });

  // A node stuck at a block is read on: its read time moves, its block and this do not.
  it("gives the stored metagraph's block and when it last advanced, 0 before any", async () => {
    const readAt = new Date('2026-11-30T12:00:00.500Z');
    const blockAdvancedAt = new Date('2026-11-30T11:40:00.000Z');
    const { metrics } = setUp({ readAt, block: 6_852_690, blockAdvancedAt });
    expect(await samples(metrics, 'metagraph_block')).toEqual({ '': 6_852_690 });
    expect(await samples(metrics, 'metagraph_block_advanced_timestamp_seconds')).toEqual({
      '': blockAdvancedAt.getTime() / 1000,
    });
    expect(await samples(setUp().metrics, 'metagraph_block')).toEqual({ '': 0 });
    expect(await samples(setUp().metrics, 'metagraph_block_advanced_timestamp_seconds')).toEqual({
      '': 0,
    });
  });

  it('shows the calls left and the miners without calls of each budgeted synapse, from one read', async () => {
    const { metrics, network } = setUp();
    // One scrape collects every gauge side by side: both budget gauges share one read.
    const text = await metrics.scrape();
    expect(text).toContain('gateway_miner_calls_left{synapse="OnDemandRequest"} 30');
    expect(text).toContain('gateway_miner_calls_left{synapse="GetContentsByBuckets"} 5');
    expect(text).toContain('gateway_miners_without_calls{synapse="OnDemandRequest"} 0');
    expect(text).toContain('gateway_miners_without_calls{synapse="GetContentsByBuckets"} 3');
    expect(network.budgetsLeft).toHaveBeenCalledTimes(1);
    // The next scrape reads them again: the shared read lasts one scrape, not for good.
    await metrics.scrape();
    expect(network.budgetsLeft).toHaveBeenCalledTimes(2);
  });

  it('says whether the node is connected, and has no such gauge without a node', async () => {
    expect(await samples(setUp().metrics, 'chain_connected')).toEqual({ '': 1 });
    const offline = setUp({ connection: { isConnected: false } }).metrics;
    expect(await samples(offline, 'chain_connected')).toEqual({ '': 0 });
    const withoutNode = setUp({ connection: null }).metrics;
    expect(withoutNode.registry.getSingleMetric('gateway_chain_connected')).toBeUndefined();
  });
});
