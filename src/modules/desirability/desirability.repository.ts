import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, EntityManager } from 'typeorm';
import { Vote } from './desirability-aggregate';
import { JobView } from './desirability.types';
import { DesirabilityItem } from './dto/desirability-request.dto';

/** Validators' current votes (`desirability_votes`), one row per hotkey. */
@Injectable()
export class DesirabilityRepository {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  /** Makes this the validator's current vote, replacing the previous one in one statement. */
  async saveVote(
    hotkey: string,
    submitted: DesirabilityItem[],
    jobs: JobView[],
    now: Date,
    manager: EntityManager,
  ): Promise<void> {
    await manager.query(
      `INSERT INTO desirability_votes (hotkey, submitted, jobs, submitted_at)
       VALUES ($1, $2::jsonb, $3::jsonb, $4)
       ON CONFLICT (hotkey) DO UPDATE
         SET submitted = EXCLUDED.submitted, jobs = EXCLUDED.jobs, submitted_at = EXCLUDED.submitted_at`,
      [hotkey, JSON.stringify(submitted), JSON.stringify(jobs), now.toISOString()],
    );
  }

  async deleteVote(hotkey: string, manager: EntityManager): Promise<void> {
    await manager.query('DELETE FROM desirability_votes WHERE hotkey = $1', [hotkey]);
  }

  /** The vote as it was submitted (unscaled), or undefined when the validator has none. */
  async findSubmitted(hotkey: string): Promise<DesirabilityItem[] | undefined> {
    const rows = await this.dataSource.query<{ submitted: DesirabilityItem[] }[]>(
      'SELECT submitted FROM desirability_votes WHERE hotkey = $1',
      [hotkey],
    );
    return rows[0]?.submitted;
  }

  /** The vote's normalized jobs, or undefined when the validator has none. */
  async findJobs(hotkey: string): Promise<JobView[] | undefined> {
    const rows = await this.dataSource.query<{ jobs: JobView[] }[]>(
      'SELECT jobs FROM desirability_votes WHERE hotkey = $1',
      [hotkey],
    );
    return rows[0]?.jobs;
  }

  /** The vote's normalized jobs and when it was submitted, read in the caller's transaction. */
  async findVote(
    hotkey: string,
    manager: EntityManager,
  ): Promise<{ jobs: JobView[]; votedAt: Date } | undefined> {
    const rows = await manager.query<{ jobs: JobView[]; submitted_at: Date }[]>(
      'SELECT jobs, submitted_at FROM desirability_votes WHERE hotkey = $1',
      [hotkey],
    );
    return rows[0] && { jobs: rows[0].jobs, votedAt: rows[0].submitted_at };
  }

  /**
   * The weight the current votes give each of these tasks, read in the caller's transaction:
   * the largest any vote gives it, 0 when no vote names it.
   */
  taskWeights(
    ids: readonly string[],
    manager: EntityManager,
  ): Promise<{ id: string; weight: number }[]> {
    return manager.query(
      `SELECT t.id, coalesce(max(j.weight), 0) AS weight
       FROM unnest($1::varchar[]) AS t(id)
       LEFT JOIN (desirability_votes v
         CROSS JOIN LATERAL jsonb_to_recordset(v.jobs) AS j(id text, weight double precision))
         ON j.id = t.id
       GROUP BY t.id`,
      [ids],
    );
  }

  listVotes(): Promise<Vote[]> {
    return this.dataSource.query('SELECT hotkey, jobs FROM desirability_votes ORDER BY hotkey');
  }
}
