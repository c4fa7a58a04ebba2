import { ApiProperty, ApiSchema } from '@nestjs/swagger';
import { NEURON_STATES, NeuronState } from '../../../network/neuron-listing';

@ApiSchema({
  name: 'CallBudgetLeft',
  description:
    'Calls of each synapse the neuron may still receive from this validator hotkey in the current window ' +
    '(VALIDATOR_SHARES_HOTKEY and MINER_CALL_BUDGETS, shared by every replica; 0 for an hour after ' +
    'the miner refused the synapse with 403); null when the synapse has no budget',
})
export class CallBudgetLeftDto {
  @ApiProperty({ nullable: true, type: 'integer', format: 'int32', minimum: 0, example: 2 })
  GetMinerIndex: number | null;

  @ApiProperty({ nullable: true, type: 'integer', format: 'int32', minimum: 0, example: 1 })
  GetDataEntityBucket: number | null;

  @ApiProperty({ nullable: true, type: 'integer', format: 'int32', minimum: 0, example: 8 })
  GetContentsByBuckets: number | null;

  @ApiProperty({ nullable: true, type: 'integer', format: 'int32', minimum: 0, example: 8 })
  OnDemandRequest: number | null;
}

@ApiSchema({ name: 'Miner' })
export class MinerDto {
  @ApiProperty({
    description: "The neuron's uid (a u16 on chain)",
    type: 'integer',
    format: 'int32',
    minimum: 0,
    maximum: 65535,
    example: 0,
  })
  uid: number;

  @ApiProperty({ example: '5DkMmXtWf16RNdusZGCrJ7ca7ADPgRnZLVWCWbgA7s7sy1AQ' })
  hotkey: string;

  @ApiProperty({ example: '5EhQWxcFdYAk7B9tNdQnJQFzww5N3964rbsMk55SujcX3PwM' })
  coldkey: string;

  @ApiProperty({
    description: '`host:port` of its axon (`[v6]:port` for IPv6); null when it serves none',
    nullable: true,
    type: String,
    example: '192.222.59.109:6028',
  })
  axon: string | null;

  @ApiProperty({
    type: 'number',
    format: 'double',
    minimum: 0,
    nullable: true,
    description:
      'Stake weight on the subnet, in alpha (α): alpha stake plus 0.18 × root TAO stake, the SDK’s total stake for the subnet; not TAO. Null when the chain node gave no total stake (it answered only get_neurons_lite)',
    example: 2.557172316,
  })
  stake: number | null;

  @ApiProperty({
    type: 'number',
    format: 'double',
    minimum: 0,
    maximum: 1,
    description: 'Share of the subnet incentive, 0..1',
    example: 0.0123,
  })
  incentive: number;

  @ApiProperty({ example: false })
  validator_permit: boolean;

  @ApiProperty({
    type: 'number',
    format: 'double',
    minimum: 0,
    maximum: 1,
    description:
      'How trustworthy its answers have been, 0..1, to four decimals (0.5 for a neuron never checked)',
    example: 0.5,
  })
  credibility: number;

  @ApiProperty({
    enum: NEURON_STATES,
    description:
      '`validator`: a validator permit and at least VALIDATOR_MIN_STAKE of stake weight (α), never asked for data (a ' +
      'permit holder with less is a miner). `not_serving`: no axon. `address_refused`: its ' +
      'axon is outside MINER_ALLOWED_NETWORKS, or a neuron of another coldkey announces the same address (host and port), ' +
      "and it is never contacted. `failing`: its circuit (this replica's " +
      "or another's) opened after consecutive failures less than MINER_BREAKER_COOLDOWN_MS ago. `active`: may be called.",
    example: 'active',
  })
  state: NeuronState;

  @ApiProperty({
    description: 'When a metagraph read last listed it; null when none has yet',
    format: 'date-time',
    nullable: true,
    type: String,
    example: '2026-11-24T12:00:00.000Z',
  })
  last_seen_at: string | null;

  @ApiProperty({ type: CallBudgetLeftDto })
  call_budget_left: CallBudgetLeftDto;
}

@ApiSchema({ name: 'MinerList' })
export class MinerListDto {
  @ApiProperty({
    description: 'Block the metagraph in use was read at (null before any read)',
    nullable: true,
    type: 'integer',
    format: 'int64',
    minimum: 0,
    example: 6852690,
  })
  block: number | null;

  @ApiProperty({
    description: 'Where the metagraph in use came from',
    nullable: true,
    type: String,
    example: 'subtensor wss://entrypoint-finney.opentensor.ai:443 netuid 13',
  })
  source: string | null;

  @ApiProperty({ type: [MinerDto], description: 'Registered neurons, by uid' })
  miners: MinerDto[];
}
