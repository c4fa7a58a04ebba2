import { ApiProperty, ApiPropertyOptional, ApiSchema } from '@nestjs/swagger';
import {
  STALE_AFTER_SYNCS,
  HOTKEY_STANDINGS,
  HotkeyStanding,
} from '../../../network/network-status';
import { PUBLICATION_STATES } from '../../publication/publication.types';

export type ComponentState = 'healthy' | 'unhealthy' | 'degraded' | 'disabled';

/** Neurons of the metagraph, counted. */
const NEURONS = { type: 'integer', format: 'int32', minimum: 0 } as const;
/** A chain block number: int64, as in every schema that carries one (MinerList.block). */
const BLOCK = { type: 'integer', format: 'int64', minimum: 0 } as const;

@ApiSchema({ name: 'ComponentStatus' })
export class ComponentStatusDto {
  @ApiProperty({ enum: ['healthy', 'unhealthy', 'degraded', 'disabled'], example: 'healthy' })
  status: ComponentState;

  // Required, as the fields below that are null in some states: every answer sends them.
  @ApiProperty({
    description:
      'Round-trip time of the check in milliseconds, to two decimals; null when the component is not checked by a round trip',
    example: 1.2,
    nullable: true,
    type: 'number',
    format: 'double',
    minimum: 0,
  })
  latency_ms: number | null;

  @ApiPropertyOptional({
    description: 'Why the component is not healthy',
    example: 'connect ECONNREFUSED',
  })
  error?: string;
}

/** Where the metagraph comes from: a subtensor node, METAGRAPH_FILE, or simulated neurons. */
export const NETWORKS = ['subtensor', 'file', 'devnet'] as const;
export type Network = (typeof NETWORKS)[number];

export const NETWORK_PROPERTY = {
  enum: NETWORKS,
  nullable: true,
  example: 'subtensor',
  description:
    'Where the miners come from: `subtensor` (the metagraph read from a chain node), `file` (METAGRAPH_FILE), ' +
    'or `devnet`: SIMULATED miners serving made-up data, for trying the gateway out. null before any metagraph was read.',
} as const;

@ApiSchema({ name: 'MinersStatus' })
export class MinersStatusDto extends ComponentStatusDto {
  @ApiProperty({
    ...NEURONS,
    description:
      'Miners that may be called now: not validators, an axon at an allowed address, circuit closed',
    example: 180,
  })
  available: number;

  @ApiProperty({ ...NEURONS, description: 'Registered neurons, validators included', example: 256 })
  total: number;

  @ApiProperty({ ...NEURONS, description: 'Registered neurons that serve an axon', example: 230 })
  serving: number;

  @ApiProperty({
    ...NEURONS,
    description:
      'Registered validators: a validator permit and at least VALIDATOR_MIN_STAKE of stake weight (α) (a permit holder ' +
      'with less is a miner, as on subnet 13)',
    example: 64,
  })
  validators: number;

  @ApiProperty({
    ...NEURONS,
    description:
      "Miners whose axon address is outside MINER_ALLOWED_NETWORKS (private, loopback, link-local…) or is announced by another coldkey's neuron too: never contacted",
    example: 0,
  })
  address_refused: number;

  @ApiProperty({
    enum: HOTKEY_STANDINGS,
    nullable: true,
    type: String,
    description:
      'This gateway’s hotkey in the metagraph in use: `validator` (a validator permit and VALIDATOR_MIN_STAKE), ' +
      'else `not_registered`, `no_permit` or `stake_too_low`, and the miners component is `degraded`: miners ' +
      'answer validators only, so every call would be refused (403). null before any metagraph was read',
    example: 'validator',
  })
  hotkey_standing: HotkeyStanding | null;
}

/** When a miner's index was synced or read: a date-time, or null. */
const SYNCED_AT = { format: 'date-time', nullable: true, type: String } as const;

@ApiSchema({ name: 'MinerIndexStatus' })
export class MinerIndexStatusDto extends ComponentStatusDto {
  @ApiProperty({
    description:
      '`healthy` while some miner’s index is loaded and usable; `degraded` while none is loaded (before the first ' +
      'index sync read one, or when every index read was empty or has been dropped since: `last_read_at` tells ' +
      'them apart; the statistics then count nothing), while none loaded is usable (`usable` 0: every miner ' +
      'holding one is failing, refused by MINER_ALLOWED_NETWORKS, deregistered or serving no axon; on-demand ' +
      'answers from stored data then say the index is not loaded), or when it could not be read; `error` says which',
    enum: ['healthy', 'degraded'],
    example: 'healthy',
  })
  declare status: ComponentState;

  @ApiProperty({
    ...NEURONS,
    description:
      'Miners whose index (GetMinerIndex, read by the index sync) is loaded and holds data, whatever their ' +
      'state: the ones the statistics (label sizes, ages, bytes by label) sum. null when it could not be read',
    example: 182,
    nullable: true,
  })
  loaded: number | null;

  @ApiProperty({
    ...NEURONS,
    description:
      'Of `loaded`, the miners whose index the stored-data path and query_bucket use now: those they may ask ' +
      '(no circuit open, address allowed, still registered, serving an axon). 0 with `loaded` above 0 is what ' +
      'makes on-demand answer that the index is not loaded. null when it could not be read',
    example: 175,
    nullable: true,
  })
  usable: number | null;

  @ApiProperty({
    ...SYNCED_AT,
    description: 'When the most recently synced of the loaded indexes was synced (by any replica)',
    example: '2026-11-21T11:58:03.000Z',
  })
  newest_synced_at: string | null;

  @ApiProperty({
    ...SYNCED_AT,
    description:
      'When the least recently synced of the loaded indexes was synced: an index is kept until its miner has ' +
      `missed ${STALE_AFTER_SYNCS} syncs in a row by its own fault, so it may be older than the last sync`,
    example: '2026-11-21T10:02:41.000Z',
  })
  oldest_synced_at: string | null;

  @ApiProperty({
    ...SYNCED_AT,
    description:
      'When an index sync last read a miner’s index, an empty one included (by any replica); null before the ' +
      'first. With `loaded` 0, null means nothing was read yet, and a time means the miners read hold no data ' +
      '(or their indexes were dropped since); null too when it could not be read',
    example: '2026-11-21T11:58:03.000Z',
  })
  last_read_at: string | null;
}

@ApiSchema({ name: 'ChainStatus' })
export class ChainStatusDto extends ComponentStatusDto {
  @ApiProperty({
    description:
      '`disabled` without SUBTENSOR_URL; `degraded` when the latest read of the metagraph failed (the last good ' +
      'one stays in use) or was refused as suspicious',
    enum: ['healthy', 'degraded', 'disabled'],
    example: 'healthy',
  })
  declare status: ComponentState;

  @ApiProperty({
    description:
      'The chain the node says it serves (`system_chain`), as read when this instance last connected; null ' +
      'before any connection',
    example: 'Bittensor',
    maxLength: 256,
    nullable: true,
    type: String,
  })
  chain_name: string | null;

  @ApiProperty({
    description:
      'The hash of the chain’s block 0, as read when this instance last connected (finney: ' +
      '`0x2f0555cc76fc2840a25a6ea3b9637146806f1f44b090c175ffde2a7e5ab36c03`); null before any connection',
    pattern: '^0x[0-9a-f]{64}$',
    maxLength: 66,
    example: '0x2f0555cc76fc2840a25a6ea3b9637146806f1f44b090c175ffde2a7e5ab36c03',
    nullable: true,
    type: String,
  })
  genesis_hash: string | null;

  @ApiProperty({
    ...BLOCK,
    description: 'Block the metagraph in use was read at',
    example: 6852690,
    nullable: true,
  })
  block: number | null;

  @ApiProperty({
    description: 'When the metagraph in use was read (by any replica, before any restart)',
    format: 'date-time',
    example: '2026-11-21T11:59:18.000Z',
    nullable: true,
    type: String,
  })
  last_read_at: string | null;

  // No minimum: the time may come from another replica whose clock is ahead.
  @ApiProperty({
    description:
      'Seconds since the block of the metagraph in use last advanced (since last_read_at when ' +
      'every read brings a new block; a node stuck at a block is read on while this grows), ' +
      'rounded. Over 10 minutes (or two METAGRAPH_SYNC_INTERVALs if longer) the chain is degraded',
    example: 42,
    nullable: true,
    type: 'integer',
    format: 'int64',
  })
  age_seconds: number | null;
}

@ApiSchema({ name: 'PublicationComponentStatus' })
export class PublicationComponentStatusDto extends ComponentStatusDto {
  @ApiProperty({
    description:
      '`disabled` without GRAVITY_REPO_URL or SUBTENSOR_URL (votes stay local); `degraded` while the last ' +
      'attempt to publish the vote failed (it is retried); `healthy` otherwise',
    enum: ['healthy', 'degraded', 'disabled'],
    example: 'healthy',
  })
  declare status: ComponentState;

  @ApiProperty({
    enum: PUBLICATION_STATES,
    description:
      'The vote’s publication state (GET /api/v1/desirabilities/publication has the details)',
    example: 'committed',
  })
  state: string;

  @ApiPropertyOptional({ pattern: '^[0-9a-f]{40}$', description: 'The Gravity commit of the vote' })
  commit_sha?: string;

  @ApiPropertyOptional({
    ...BLOCK,
    description: 'Block the vote was committed in',
    example: 6852691,
  })
  block_number?: number;

  @ApiPropertyOptional({
    format: 'date-time',
    description: 'When the next attempt is due',
    example: '2026-11-20T13:12:00.000Z',
  })
  next_attempt_at?: string;
}

/**
 * The components of a healthy gateway on the real network at the SystemStatus example's time:
 * each component's example. Assembled from the fields' examples instead, every component showed
 * `status: "healthy"` beside an `error` (a docs audit's finding). A spec holds it to what
 * systemStatusReport makes of it: `healthy`, as the SystemStatus example says.
 */
export const SYSTEM_COMPONENTS_EXAMPLE = {
  database: { status: 'healthy', latency_ms: 1.2 },
  redis: { status: 'healthy', latency_ms: 0.48 },
  miners: {
    status: 'healthy',
    latency_ms: null,
    available: 180,
    total: 256,
    serving: 230,
    validators: 64,
    address_refused: 0,
    hotkey_standing: 'validator',
  },
  miner_index: {
    status: 'healthy',
    latency_ms: 2.31,
    loaded: 182,
    usable: 175,
    newest_synced_at: '2026-11-21T11:58:03.000Z',
    oldest_synced_at: '2026-11-21T10:02:41.000Z',
    last_read_at: '2026-11-21T11:58:03.000Z',
  },
  chain: {
    status: 'healthy',
    latency_ms: null,
    chain_name: 'Bittensor',
    genesis_hash: '0x2f0555cc76fc2840a25a6ea3b9637146806f1f44b090c175ffde2a7e5ab36c03',
    block: 6852690,
    last_read_at: '2026-11-21T11:59:18.000Z',
    age_seconds: 42,
  },
  publication: {
    status: 'healthy',
    latency_ms: null,
    state: 'committed',
    commit_sha: '3f786850e387550fdab836ed7e6dc881de23001b',
    block_number: 6852691,
  },
} satisfies SystemComponentsDto;

@ApiSchema({ name: 'SystemComponents' })
export class SystemComponentsDto {
  @ApiProperty({ type: ComponentStatusDto, example: SYSTEM_COMPONENTS_EXAMPLE.database })
  database: ComponentStatusDto;

  @ApiProperty({
    type: ComponentStatusDto,
    description:
      '`disabled` when REDIS_URL is not set, `degraded` when it cannot be reached (rate limits and the cache then work per process)',
    example: SYSTEM_COMPONENTS_EXAMPLE.redis,
  })
  redis: ComponentStatusDto;

  @ApiProperty({ type: MinersStatusDto, example: SYSTEM_COMPONENTS_EXAMPLE.miners })
  miners: MinersStatusDto;

  @ApiProperty({
    type: MinerIndexStatusDto,
    description:
      'The miners’ data index the statistics and query_bucket read: how many miners’ indexes are loaded and ' +
      'when they were synced',
    example: SYSTEM_COMPONENTS_EXAMPLE.miner_index,
  })
  miner_index: MinerIndexStatusDto;

  @ApiProperty({
    type: ChainStatusDto,
    description: 'The subtensor node the metagraph is read from',
    example: SYSTEM_COMPONENTS_EXAMPLE.chain,
  })
  chain: ChainStatusDto;

  @ApiProperty({
    type: PublicationComponentStatusDto,
    description:
      'Publication of this validator’s vote to the network (Gravity repository, chain commitment)',
    example: SYSTEM_COMPONENTS_EXAMPLE.publication,
  })
  publication: PublicationComponentStatusDto;
}

@ApiSchema({ name: 'SystemStatus' })
export class SystemStatusDto {
  @ApiProperty({ enum: ['healthy', 'degraded', 'unhealthy'], example: 'healthy' })
  status: 'healthy' | 'degraded' | 'unhealthy';

  @ApiProperty({ format: 'date-time', example: '2026-11-21T12:00:00.000Z' })
  timestamp: string;

  @ApiProperty({
    type: 'integer',
    format: 'int64',
    minimum: 0,
    description: 'Seconds since this instance started, rounded',
    example: 3600,
  })
  uptime_seconds: number;

  @ApiProperty({ example: '1.0.0' })
  version: string;

  @ApiProperty({ ...NETWORK_PROPERTY, type: String })
  network: Network | null;

  @ApiProperty({ type: SystemComponentsDto })
  components: SystemComponentsDto;
}
