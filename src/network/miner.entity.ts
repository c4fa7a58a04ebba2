import { Column, Entity, PrimaryColumn } from 'typeorm';

/**
 * `failing`: its circuit is open; `address_refused`: its axon is outside MINER_ALLOWED_NETWORKS
 * and it is never contacted; `deregistered`: no longer in the metagraph.
 */
export type MinerState = 'active' | 'failing' | 'address_refused' | 'deregistered';

/** One neuron of the metagraph, with what this validator has learned about it. */
@Entity('miners')
export class MinerEntity {
  @PrimaryColumn({ type: 'integer' })
  uid: number;

  @Column({ type: 'varchar', length: 64 })
  hotkey: string;

  @Column({ type: 'varchar', length: 64 })
  coldkey: string;

  @Column({ name: 'axon_url', type: 'varchar', length: 256, nullable: true })
  axonUrl: string | null;

  /** Total stake in TAO; null when the metagraph source could not give it. */
  @Column({ type: 'double precision', nullable: true })
  stake: number | null;

  @Column({ type: 'double precision' })
  incentive: number;

  @Column({ name: 'validator_permit', type: 'boolean' })
  validatorPermit: boolean;

  /** 0..1, an exponential moving average of how trustworthy its answers have been. */
  @Column({ type: 'double precision' })
  credibility: number;

  @Column({ type: 'varchar', length: 16 })
  state: MinerState;

  @Column({ name: 'last_seen_at', type: 'timestamptz', nullable: true })
  lastSeenAt: Date | null;

  @Column({ name: 'updated_at', type: 'timestamptz' })
  updatedAt: Date;
}

/** A miner with an axon address (what the metagraph hands out for calls): it can be called. */
export type ServingMiner = MinerEntity & { axonUrl: string };
