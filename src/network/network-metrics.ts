import { Inject, Injectable, OnModuleInit } from '@nestjs/common';
import { MetricsService } from '../common/metrics/metrics.service';
import { SUBTENSOR_CONNECTION } from './chain/chain-commitments.service';
import { SubtensorConnection } from './chain/subtensor-connection';
import { HOTKEY_STANDINGS } from './network-status';
import { MetagraphService } from './metagraph/metagraph.service';
import { MinersRepository } from './miners.repository';
import { NetworkService, SynapseBudgetLeft } from './network.service';

/**
 * Where the gateway stands on the network, read at scrape time: the miners it can ask, its
 * hotkey's standing and the metagraph's read time (what system-status shows), and whether the
 * node is connected.
 */
@Injectable()
export class NetworkMetrics implements OnModuleInit {
  constructor(
    private readonly metrics: MetricsService,
    private readonly metagraph: MetagraphService,
    private readonly repository: MinersRepository,
    @Inject(SUBTENSOR_CONNECTION) private readonly connection: SubtensorConnection | null,
    private readonly network: NetworkService,
  ) {}

  /** One read of the budgets serves both of its gauges in a scrape (collected side by side). */
  private budgetsRead: Promise<SynapseBudgetLeft[]> | undefined;

  private budgetsLeft(): Promise<SynapseBudgetLeft[]> {
    this.budgetsRead ??= this.network.budgetsLeft().finally(() => {
      this.budgetsRead = undefined;
    });
    return this.budgetsRead;
  }

  onModuleInit(): void {
    this.metrics.gauge(
      'miners',
      'Neurons of the metagraph in use, as health and system-status count them: total (registered), serving (an axon), validators, available (miners that can be asked: serving, not failing), address_refused',
      ['state'],
      // In memory, as health counts them: no database read.
      async () => {
        const counts = this.network.countMiners();
        return [
          { labels: { state: 'total' }, value: counts.total },
          { labels: { state: 'serving' }, value: counts.serving },
          { labels: { state: 'validators' }, value: counts.validators },
          { labels: { state: 'available' }, value: counts.available },
          { labels: { state: 'address_refused' }, value: counts.addressRefused },
        ];
      },
    );
    this.metrics.gauge(
      'hotkey_standing',
      'This gateway’s hotkey in the metagraph in use (1 for the current standing): validator, not_registered, no_permit, stake_too_low; all 0 before any metagraph was read',
      ['standing'],
      // In memory: no database read.
      () => {
        const current = this.metagraph.hotkeyCheck()?.standing;
        return Promise.resolve(
          HOTKEY_STANDINGS.map((standing) => ({
            labels: { standing },
            value: standing === current ? 1 : 0,
          })),
        );
      },
    );
    this.metrics.gauge(
      'metagraph_last_read_timestamp_seconds',
      'Unix time at which the metagraph in use was read (by any replica, before any restart); 0 before any was read',
      [],
      async () => {
        const stored = await this.repository.lastMetagraph();
        return [{ labels: {}, value: stored ? stored.readAt.getTime() / 1000 : 0 }];
      },
    );
    this.metrics.gauge(
      'metagraph_block',
      'Block of the metagraph in use (by any replica, before any restart); 0 before any was read',
      [],
      async () => {
        const stored = await this.repository.lastMetagraph();
        return [{ labels: {}, value: stored?.block ?? 0 }];
      },
    );
    this.metrics.gauge(
      'metagraph_block_advanced_timestamp_seconds',
      'Unix time at which the block of the metagraph in use last advanced (a node stuck at a block is read on, its block stays); 0 before any was read',
      [],
      async () => {
        const stored = await this.repository.lastMetagraph();
        const at = stored ? (stored.blockAdvancedAt ?? stored.readAt) : undefined;
        return [{ labels: {}, value: at ? at.getTime() / 1000 : 0 }];
      },
    );
    // Read from the index itself, which every replica shares: the in-process
    // index_sync_last_completed gauge is 0 after each restart until that process's next sync,
    // up to INDEX_SYNC_INTERVAL later, so an alert on it fired at every deploy (a metrics audit).
    this.metrics.gauge(
      'miner_index_newest_synced_timestamp_seconds',
      'Unix time at which the most recently synced miner index was synced (by any replica, before any restart): what system-status calls miner_index.newest_synced_at; 0 while no index is loaded',
      [],
      async () => {
        const { newestSyncedAt } = await this.network.indexFreshness();
        return [{ labels: {}, value: newestSyncedAt ? newestSyncedAt.getTime() / 1000 : 0 }];
      },
    );
    this.metrics.gauge(
      'miner_calls_left',
      'Calls of each budgeted synapse (MINER_CALL_BUDGETS) this hotkey may still make now to the miners serving data, summed over them: near 0, users’ queries and the validator beside us are about to be refused; the same on every replica (aggregate with max)',
      ['synapse'],
      async () =>
        (await this.budgetsLeft()).map(({ synapse, callsLeft }) => ({
          labels: { synapse },
          value: callsLeft,
        })),
    );
    this.metrics.gauge(
      'miners_without_calls',
      'Miners serving data that have no call of a budgeted synapse left for this hotkey now (MINER_CALL_BUDGETS); the same on every replica (aggregate with max)',
      ['synapse'],
      async () =>
        (await this.budgetsLeft()).map(({ synapse, minersWithoutCalls }) => ({
          labels: { synapse },
          value: minersWithoutCalls,
        })),
    );
    const connection = this.connection;
    if (connection)
      this.metrics.gauge(
        'chain_connected',
        'Whether this instance holds an open connection to the subtensor node (SUBTENSOR_URL): 1 or 0',
        [],
        () => Promise.resolve([{ labels: {}, value: connection.isConnected ? 1 : 0 }]),
      );
  }
}
