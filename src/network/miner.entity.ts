import { Check, Column, Entity, Index, PrimaryColumn } from 'typeorm';

/**
 * `failing`: a circuit of its opened (this replica's or another's) and its cooldown lasts
 * (`failingUntil`; see currentState); `address_refused`: its axon is outside
 * MINER_ALLOWED_NETWORKS or another coldkey's neuron announces it too (MetagraphWriter), and it
 * is never contacted; `deregistered`: no longer in the metagraph.
 */
export type MinerState = 'active' | 'failing' | 'address_refused' | 'deregistered';

/**
 * One neuron of the metagraph, with what this validator has learned about it. The entity
 * declares the whole table as the migrations built it (its index, CHECKs, defaults and the miner
 * index's columns), so that TypeORM's schema builder finds nothing to change
 * (test/medium/entity-schema.medium-spec.ts; docs/decisions.md, "Start-up"). The code reads it
 * through `find` only; every write is SQL (MinersRepository, the miner index).
 */
@Entity('miners')
@Index('miners_hotkey_idx', ['hotkey'], { unique: true })
@Check('miners_credibility_check', 'credibility >= 0 AND credibility <= 1')
@Check('miners_state_check', `state IN ('active', 'failing', 'address_refused', 'deregistered')`)
export class MinerEntity {
  @PrimaryColumn({ type: 'integer' })
  uid: number;

  @Column({ type: 'varchar', length: 64 })
  hotkey: string;

  @Column({ type: 'varchar', length: 64 })
  coldkey: string;

  @Column({ name: 'axon_url', type: 'varchar', length: 256, nullable: true })
  axonUrl: string | null;

  /**
   * Stake weight on the subnet in alpha (α + 0.18 × root TAO; not TAO); null when the metagraph
   * source could not give it.
   */
  @Column({ type: 'double precision', nullable: true, default: 0 })
  stake: number | null;

  @Column({ type: 'double precision', default: 0 })
  incentive: number;

  @Column({ name: 'validator_permit', type: 'boolean', default: false })
  validatorPermit: boolean;

  /**
   * 0..1, an exponential moving average of how trustworthy its answers have been. The default
   * is an expression: TypeORM quotes a number (`'0.5'`) but reads Postgres's fractional default
   * back unquoted (`0.5`), and would find them different.
   */
  @Column({ type: 'double precision', default: () => '0.5' })
  credibility: number;

  @Column({ type: 'varchar', length: 16, default: 'active' })
  state: MinerState;

  /** When a `failing` state ends: the cooldown of the circuit that opened. */
  @Column({ name: 'failing_until', type: 'timestamptz', nullable: true })
  failingUntil: Date | null;

  @Column({ name: 'last_seen_at', type: 'timestamptz', nullable: true })
  lastSeenAt: Date | null;

  @Column({ name: 'updated_at', type: 'timestamptz', default: () => 'now()' })
  updatedAt: Date;
}

/**
 * The miner index's columns (migrations MinerIndex, IndexMissedSyncs), declared for the schema
 * only, and without a property on the class: never selected, inserted or updated through the
 * entity (the miner index reads and writes them in SQL). Declared as class fields, they would be
 * keys of every miner `find` returns (undefined: ES2022 fields), which they never were. A `save`
 * through the repository would read them back onto the object it saved; nothing saves miners so.
 */
const SCHEMA_ONLY = { select: false, insert: false, update: false } as const;
Column({ name: 'index_synced_at', type: 'timestamptz', nullable: true, ...SCHEMA_ONLY })(
  MinerEntity.prototype,
  'indexSyncedAt',
);
Column({ name: 'index_buckets', type: 'integer', default: 0, ...SCHEMA_ONLY })(
  MinerEntity.prototype,
  'indexBuckets',
);
Column({ name: 'index_missed_syncs', type: 'smallint', default: 0, ...SCHEMA_ONLY })(
  MinerEntity.prototype,
  'indexMissedSyncs',
);

/** A miner with an axon address (what the metagraph hands out for calls): it can be called. */
export type ServingMiner = MinerEntity & { axonUrl: string };

/** Whether the miner serves an axon at an address it may be called at. */
export function isServing(miner: MinerEntity): miner is ServingMiner {
  return miner.axonUrl !== null && miner.state !== 'address_refused';
}

/**
 * The miner's state at `now` (ms, the real clock: Postgres's and the circuits' cooldown). A
 * `failing` state lasts until `failingUntil` and is then `active`, as the circuit it mirrors lets
 * a call through after its cooldown: only the breaker that opened could have cleared it, and
 * after a restart, or on another replica, none would. A `failing` without an end (written by a
 * release before failing_until) is over.
 */
export function currentState(
  miner: Pick<MinerEntity, 'state' | 'failingUntil'>,
  now: number,
): MinerState {
  if (miner.state !== 'failing') return miner.state;
  return miner.failingUntil !== null && miner.failingUntil.getTime() > now ? 'failing' : 'active';
}

/** currentState(m, now()) is `active`, in SQL over a `miners` row `m`: one rule in both. */
export const ACTIVE_SQL =
  "(m.state = 'active' OR (m.state = 'failing' AND (m.failing_until IS NULL OR m.failing_until <= now())))";
