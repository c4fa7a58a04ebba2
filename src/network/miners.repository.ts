import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, Repository } from 'typeorm';
import { MinerEntity, MinerState } from './miner.entity';
import { MetagraphNeuron } from './protocol';

export interface MinerCounts {
  total: number;
  available: number;
}

export interface CredibilityScore {
  uid: number;
  score: number;
}

@Injectable()
export class MinersRepository {
  private readonly miners: Repository<MinerEntity>;

  constructor(@InjectDataSource() private readonly dataSource: DataSource) {
    this.miners = dataSource.getRepository(MinerEntity);
  }

  /** Available = a registered non-validator whose circuit is not open (state `failing`). */
  async countMiners(): Promise<MinerCounts> {
    const [row] = await this.dataSource.query<MinerCounts[]>(
      `SELECT count(*) FILTER (WHERE NOT validator_permit AND state <> 'deregistered')::int AS total,
              count(*) FILTER (WHERE NOT validator_permit AND state = 'active')::int AS available
       FROM miners`,
    );
    return row;
  }

  listAll(): Promise<MinerEntity[]> {
    return this.miners.find({ order: { uid: 'ASC' } });
  }

  /**
   * Brings the table in line with a metagraph in one transaction. A uid whose hotkey changed was
   * re-registered by someone else: its credibility starts over. Uids missing from the metagraph
   * are marked deregistered, not deleted (their history stays).
   */
  async syncNeurons(neurons: readonly MetagraphNeuron[]): Promise<void> {
    await this.dataSource.transaction(async (manager) => {
      if (neurons.length > 0) {
        await manager.query(
          `INSERT INTO miners (uid, hotkey, coldkey, axon_url, stake, incentive, validator_permit, state, last_seen_at, updated_at)
           SELECT * , 'active', now(), now() FROM unnest($1::int[], $2::varchar[], $3::varchar[], $4::varchar[],
                                                      $5::float8[], $6::float8[], $7::bool[])
           ON CONFLICT (uid) DO UPDATE SET
             credibility = CASE WHEN miners.hotkey = EXCLUDED.hotkey THEN miners.credibility ELSE 0.5 END,
             state = CASE WHEN miners.hotkey = EXCLUDED.hotkey AND miners.state = 'failing' THEN 'failing' ELSE 'active' END,
             hotkey = EXCLUDED.hotkey, coldkey = EXCLUDED.coldkey, axon_url = EXCLUDED.axon_url,
             stake = EXCLUDED.stake, incentive = EXCLUDED.incentive, validator_permit = EXCLUDED.validator_permit,
             last_seen_at = now(), updated_at = now()`,
          [
            neurons.map((n) => n.uid),
            neurons.map((n) => n.hotkey),
            neurons.map((n) => n.coldkey),
            neurons.map((n) => n.axon_url),
            neurons.map((n) => n.stake),
            neurons.map((n) => n.incentive),
            neurons.map((n) => n.validator_permit),
          ],
        );
      }
      await manager.query(
        `UPDATE miners SET state = 'deregistered', updated_at = now()
         WHERE state <> 'deregistered' AND NOT (uid = ANY($1::int[]))`,
        [neurons.map((n) => n.uid)],
      );
    });
  }

  async setState(uid: number, state: Exclude<MinerState, 'deregistered'>): Promise<void> {
    await this.dataSource.query(
      `UPDATE miners SET state = $2, updated_at = now() WHERE uid = $1 AND state <> 'deregistered'`,
      [uid, state],
    );
  }

  /**
   * Moves each miner's credibility towards its observed score by `alpha` (an exponential moving
   * average), in SQL so that replicas updating the same miner do not overwrite each other.
   */
  async applyCredibilityScores(scores: readonly CredibilityScore[], alpha: number): Promise<Map<number, number>> {
    if (scores.length === 0) return new Map();
    const rows = await this.dataSource.query<{ uid: number; credibility: number }[]>(
      `UPDATE miners AS m
       SET credibility = LEAST(1, GREATEST(0, m.credibility + $3::float8 * (s.score - m.credibility))), updated_at = now()
       FROM unnest($1::int[], $2::float8[]) AS s(uid, score)
       WHERE m.uid = s.uid
       RETURNING m.uid, m.credibility`,
      [scores.map((s) => s.uid), scores.map((s) => s.score), alpha],
    );
    return new Map(rows.map((row) => [row.uid, row.credibility]));
  }
}
