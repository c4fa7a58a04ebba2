import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, EntityManager, Repository } from 'typeorm';
import { returningRows } from '../database/returning-rows';
import { MinerIndexService } from './index/miner-index.service';
import { MinerEntity, MinerState } from './miner.entity';
import { MetagraphNeuron } from './protocol';

/** Arbitrary constant: the advisory lock that serializes applying metagraphs across replicas. */
const METAGRAPH_LOCK_ID = 7_013_000_004;
/** A new miner's credibility (the column's default): neither trusted nor distrusted yet. */
const STARTING_CREDIBILITY = 0.5;

/** Where an applied metagraph came from. */
export interface MetagraphOrigin {
  network: MetagraphNetwork;
  /** For people: `subtensor wss://… netuid 13`, `file /path`. */
  source: string;
  /** The subnet read (null in a row stored before it was recorded). */
  netuid?: number | null;
  block: number;
  /**
   * The genesis hash of the chain a node's read came from (0x-prefixed hex): blocks are compared
   * only within one chain. Null for a file's or the devnet's, and in a row stored before it.
   */
  genesisHash?: string | null;
}

/** `subtensor`: read from a chain node; `file`: METAGRAPH_FILE; `devnet`: simulated neurons. */
export type MetagraphNetwork = 'subtensor' | 'file' | 'devnet';

export interface StoredMetagraph extends MetagraphOrigin {
  neurons: number;
  readAt: Date;
  /**
   * When its block last advanced: the read time of the first read at this block (a node stuck
   * at a block is read again and again). Absent in a row of a release before it.
   */
  blockAdvancedAt?: Date | null;
}

/** The chain of a stored metagraph: its genesis hash (null: not recorded) and its block. */
export interface StoredChain {
  genesisHash: string | null;
  block: number;
}

/**
 * A read at a block older than the stored metagraph's, from the same source, netuid and chain (a
 * lagging node behind the same address): applied, it would put an older subnet over a newer one.
 */
export class StaleMetagraphError extends Error {
  override readonly name = 'StaleMetagraphError';
}

/**
 * One or more EMA steps for a miner, folded: after observations s1..sk with weight α,
 * credibility becomes c·(1−α)^k + Σ α(1−α)^(k−i)·si, i.e. c·decay + add.
 */
export interface CredibilityUpdate {
  uid: number;
  /** The hotkey observed: a uid re-registered by another since is left as it is. */
  hotkey: string;
  decay: number;
  add: number;
}

@Injectable()
export class MinersRepository {
  private readonly miners: Repository<MinerEntity>;

  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly index: MinerIndexService,
  ) {
    this.miners = dataSource.getRepository(MinerEntity);
  }

  listAll(): Promise<MinerEntity[]> {
    return this.miners.find({ order: { uid: 'ASC' } });
  }

  /**
   * Brings the table in line with a metagraph in one transaction, and records where it came
   * from. A uid whose hotkey changed was re-registered by someone else: what the old miner
   * claimed to hold is not the new one's, so its index goes and its credibility starts over.
   * Uids missing from the metagraph are marked deregistered, not deleted (their history stays),
   * and their index goes too, as does the index of a neuron that is now a validator (`validators`
   * uids): no index sync asks a validator again, so it would be stale for good, and no stored-data
   * call may go to one. These indexes leave the statistics at the credibility they were counted
   * at (see MinerIndexService.dropIndexes). Neurons whose axon address is refused (`refused`
   * uids) are marked `address_refused`.
   */
  async syncNeurons(
    neurons: readonly MetagraphNeuron[],
    {
      refused = new Set(),
      validators = new Set(),
      origin,
    }: {
      refused?: ReadonlySet<number>;
      validators?: ReadonlySet<number>;
      origin?: MetagraphOrigin;
    } = {},
  ): Promise<{
    hotkeyChanged: number[];
    indexesDropped: number[];
    /** The stored metagraph's chain, when the read is of another chain from the same source. */
    otherChain?: StoredChain;
  }> {
    return this.dataSource.transaction(async (manager) => {
      // Replicas apply metagraphs one at a time, so the uids found changing here are those that
      // change below.
      await manager.query('SELECT pg_advisory_xact_lock($1)', [METAGRAPH_LOCK_ID]);
      const otherChain = origin && (await this.refuseOlderBlock(manager, origin));
      const uids = neurons.map((n) => n.uid);
      const changed = (
        await manager.query<{ uid: number }[]>(
          `SELECT m.uid FROM miners m JOIN unnest($1::int[], $2::varchar[]) AS n(uid, hotkey)
             ON n.uid = m.uid
           WHERE m.hotkey <> n.hotkey`,
          [uids, neurons.map((n) => n.hotkey)],
        )
      ).map((row) => row.uid);
      const gone = (
        await manager.query<{ uid: number }[]>(
          'SELECT uid FROM miners WHERE NOT (uid = ANY($1::int[]))',
          [uids],
        )
      ).map((row) => row.uid);
      const indexesDropped = await this.index.dropIndexes(manager, [
        ...changed,
        ...gone,
        ...validators,
      ]);
      if (changed.length > 0) await this.startOver(manager, changed);
      await this.releaseMovedHotkeys(manager, uids, neurons, changed);
      if (neurons.length > 0) {
        await manager.query(
          `INSERT INTO miners (uid, hotkey, coldkey, axon_url, stake, incentive, validator_permit, state, last_seen_at, updated_at)
           SELECT uid, hotkey, coldkey, axon_url, stake, incentive, validator_permit,
                  CASE WHEN refused THEN 'address_refused' ELSE 'active' END, now(), now()
           FROM unnest($1::int[], $2::varchar[], $3::varchar[], $4::varchar[], $5::float8[], $6::float8[],
                       $7::bool[], $8::bool[])
                AS n(uid, hotkey, coldkey, axon_url, stake, incentive, validator_permit, refused)
           ON CONFLICT (uid) DO UPDATE SET
             state = CASE WHEN EXCLUDED.state = 'address_refused' THEN 'address_refused'
                          WHEN miners.hotkey = EXCLUDED.hotkey AND miners.state = 'failing' THEN 'failing'
                          ELSE 'active' END,
             hotkey = EXCLUDED.hotkey, coldkey = EXCLUDED.coldkey, axon_url = EXCLUDED.axon_url,
             stake = EXCLUDED.stake, incentive = EXCLUDED.incentive, validator_permit = EXCLUDED.validator_permit,
             last_seen_at = now(), updated_at = now()`,
          [
            uids,
            neurons.map((n) => n.hotkey),
            neurons.map((n) => n.coldkey),
            neurons.map((n) => n.axon_url),
            neurons.map((n) => n.stake),
            neurons.map((n) => n.incentive),
            neurons.map((n) => n.validator_permit),
            neurons.map((n) => refused.has(n.uid)),
          ],
        );
      }
      await manager.query(
        `UPDATE miners SET state = 'deregistered', updated_at = now()
         WHERE state <> 'deregistered' AND NOT (uid = ANY($1::int[]))`,
        [uids],
      );
      if (origin)
        await manager.query(
          `INSERT INTO metagraph_state (id, network, source, netuid, block, neurons, read_at, block_advanced_at, genesis_hash)
           VALUES (1, $1, $2, $5, $3, $4, now(), now(), $6)
           ON CONFLICT (id) DO UPDATE SET network = EXCLUDED.network, source = EXCLUDED.source,
             netuid = EXCLUDED.netuid, block = EXCLUDED.block, neurons = EXCLUDED.neurons,
             read_at = EXCLUDED.read_at, genesis_hash = EXCLUDED.genesis_hash,
             block_advanced_at = CASE
               WHEN metagraph_state.block_advanced_at IS NULL OR EXCLUDED.block <> metagraph_state.block
                 OR EXCLUDED.source <> metagraph_state.source
                 OR EXCLUDED.netuid IS DISTINCT FROM metagraph_state.netuid
                 OR EXCLUDED.genesis_hash IS DISTINCT FROM metagraph_state.genesis_hash
               THEN EXCLUDED.read_at ELSE metagraph_state.block_advanced_at END`,
          [
            origin.network,
            origin.source,
            origin.block,
            neurons.length,
            origin.netuid ?? null,
            origin.genesisHash ?? null,
          ],
        );
      return { hotkeyChanged: changed, indexesDropped, ...(otherChain ? { otherChain } : {}) };
    });
  }

  /**
   * Throws StaleMetagraphError for a read at a lower block than the stored metagraph's from the
   * same network, source, netuid and chain (genesis hash). Under the metagraph lock, so a replica
   * whose node lags cannot overwrite what another replica just applied. Another source or netuid
   * is not compared: its blocks may be another chain's. Nor is another chain behind the same
   * source (a reset testnet or local node starts again at block 0; a row stored before the
   * genesis was recorded is of an unknown chain): returned, for the caller to say so. Only a
   * node's reads: a file's block is what its writer put there (an operator going back to an
   * earlier file, a test's), and the devnet's is made up.
   */
  private async refuseOlderBlock(
    manager: EntityManager,
    origin: MetagraphOrigin,
  ): Promise<StoredChain | undefined> {
    if (origin.network !== 'subtensor') return undefined;
    const [stored] = await manager.query<
      { block: number; read_at: Date; genesis_hash: string | null }[]
    >(
      `SELECT block::float8 AS block, read_at, genesis_hash FROM metagraph_state
       WHERE id = 1 AND network = $1 AND source = $2 AND (netuid IS NULL OR netuid = $3)`,
      [origin.network, origin.source, origin.netuid ?? null],
    );
    if (!stored) return undefined;
    if (stored.genesis_hash !== (origin.genesisHash ?? null))
      return { genesisHash: stored.genesis_hash, block: stored.block };
    if (origin.block < stored.block)
      throw new StaleMetagraphError(
        `block ${origin.block} is older than the stored metagraph's block ${stored.block} ` +
          `of the same chain (read at ${stored.read_at.toISOString()}): the node lags behind, ` +
          'the stored one stays',
      );
    return undefined;
  }

  /**
   * Frees the hotkeys the upsert below gives to other uids (miners_hotkey_idx is unique, and
   * checked row by row): a hotkey re-registered at a new uid while a row still held it failed
   * the sync, and every later one. A uid gone from the metagraph whose hotkey is now at another
   * uid is deleted (the hotkey is listed there; only deregistered rows are lost); a uid whose
   * hotkey changed holds a placeholder until the upsert writes its new one, so hotkeys that
   * swap uids never meet. Both lost their index above.
   */
  private async releaseMovedHotkeys(
    manager: EntityManager,
    uids: readonly number[],
    neurons: readonly MetagraphNeuron[],
    changed: readonly number[],
  ): Promise<void> {
    await manager.query(
      'DELETE FROM miners WHERE NOT (uid = ANY($1::int[])) AND hotkey = ANY($2::varchar[])',
      [uids, neurons.map((n) => n.hotkey)],
    );
    // '#' is outside SS58's alphabet, so no hotkey is ever spelled like a placeholder.
    if (changed.length > 0)
      await manager.query(`UPDATE miners SET hotkey = '#' || uid WHERE uid = ANY($1::int[])`, [
        changed,
      ]);
  }

  /**
   * Credibility back to where a new miner starts, under the totals lock and moving the adjusted
   * totals, as every credibility change does: their indexes were just dropped, so this moves
   * nothing, unless an index replace committed one in between.
   */
  private async startOver(manager: EntityManager, uids: readonly number[]): Promise<void> {
    await this.index.lockTotals(manager);
    const rows = returningRows<{ uid: number; old: number }>(
      await manager.query(
        `UPDATE miners AS m SET credibility = $2, updated_at = now()
         FROM miners AS before
         WHERE m.uid = ANY($1::int[]) AND before.uid = m.uid
         RETURNING m.uid, before.credibility AS old`,
        [uids, STARTING_CREDIBILITY],
      ),
    );
    const moved = rows.filter((row) => row.old !== STARTING_CREDIBILITY);
    if (moved.length > 0)
      await this.index.propagateCredibility(
        manager,
        moved.map((row) => row.uid),
        moved.map((row) => STARTING_CREDIBILITY - row.old),
      );
  }

  /** The last metagraph applied (by any replica, before any restart), if one ever was. */
  async lastMetagraph(): Promise<StoredMetagraph | undefined> {
    const [row] = await this.dataSource.query<StoredMetagraph[]>(
      `SELECT network, source, netuid, block::float8 AS block, neurons, read_at AS "readAt",
              block_advanced_at AS "blockAdvancedAt", genesis_hash AS "genesisHash"
       FROM metagraph_state WHERE id = 1`,
    );
    return row;
  }

  /**
   * A refused address is left refused by circuit changes; the next metagraph sync decides. A
   * `failing` state lasts `cooldownMs` from now (the circuit's cooldown: see currentState), and
   * each opening starts it again; other states are written only when they change. Only while
   * the uid is still the hotkey observed.
   */
  async setState(
    miner: { uid: number; hotkey: string },
    state: Exclude<MinerState, 'deregistered'>,
    cooldownMs: number,
  ): Promise<void> {
    await this.dataSource.query(
      `UPDATE miners SET state = $2, updated_at = now(),
         failing_until = CASE WHEN $2 = 'failing' THEN now() + $3 * interval '1 millisecond' END
       WHERE uid = $1 AND hotkey = $4 AND state <> 'deregistered'
         AND (state <> 'address_refused' OR $2 = 'address_refused')
         AND (state <> $2 OR $2 = 'failing')`,
      [miner.uid, state, cooldownMs, miner.hotkey],
    );
  }

  /**
   * Applies credibility updates — each `credibility × decay + add`, which is what a run of
   * exponential-moving-average steps folds into (see `CredibilityUpdate`) — and, in the same
   * transaction, has the miner index move the credibility-adjusted totals by each miner's
   * change times its per-label and per-hour totals, so the stats stay exact at once. In SQL, so
   * that replicas updating the same miner do not overwrite each other.
   */
  async applyCredibilityUpdates(
    updates: readonly CredibilityUpdate[],
  ): Promise<Map<number, number>> {
    if (updates.length === 0) return new Map();
    return this.dataSource.transaction(async (manager) => {
      await this.index.lockTotals(manager);
      const rows = returningRows<{ uid: number; old: number; credibility: number }>(
        await manager.query(
          `UPDATE miners AS m
         SET credibility = LEAST(1, GREATEST(0, m.credibility * u.decay + u.add)), updated_at = now()
         FROM unnest($1::int[], $2::text[], $3::float8[], $4::float8[])
                AS u(uid, hotkey, decay, add), miners AS before
         WHERE m.uid = u.uid AND m.hotkey = u.hotkey AND before.uid = m.uid
         RETURNING m.uid, before.credibility AS old, m.credibility`,
          [
            updates.map((u) => u.uid),
            updates.map((u) => u.hotkey),
            updates.map((u) => u.decay),
            updates.map((u) => u.add),
          ],
        ),
      );
      const changed = rows.filter((row) => row.credibility !== row.old);
      if (changed.length > 0)
        await this.index.propagateCredibility(
          manager,
          changed.map((row) => row.uid),
          changed.map((row) => row.credibility - row.old),
        );
      return new Map(rows.map((row) => [row.uid, row.credibility]));
    });
  }
}
