import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, EntityManager } from 'typeorm';
import { affectedCount, returningRows } from '../../database/returning-rows';
import { Claim, PublicationRow } from './publication.types';

/**
 * A publication back at its start, the push: no progress, no failures. A newer vote, a new
 * target and a commit the repository lost all set it (the last with its reason as the error),
 * so that a column of progress added later is cleared by each.
 */
const PROGRESS_DROPPED = `state = 'pending', attempts = 0, commit_sha = NULL, pushed_at = NULL,
  block_number = NULL, block_hash = NULL, committed_at = NULL`;
const FROM_THE_PUSH = `${PROGRESS_DROPPED}, last_error = NULL`;

/**
 * `desirability_publications`: one row per hotkey, its newest vote and how far its publication
 * got. Every change a worker makes names the version it claimed, so that a worker whose vote
 * was replaced meanwhile changes nothing.
 */
@Injectable()
export class PublicationRepository {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  /**
   * Makes this vote the one to publish, inside the caller's transaction (the one storing the
   * vote): a newer vote replaces whatever was pending, pushed or committed, and restarts from
   * the push, due `now`, for `target`. A claim held by a worker stays: that worker finds its
   * version replaced.
   */
  async enqueue(
    hotkey: string,
    content: string,
    taskIds: readonly string[],
    votedAt: Date,
    now: Date,
    target: string,
    manager: EntityManager,
  ): Promise<void> {
    await manager.query(
      `INSERT INTO desirability_publications
         (hotkey, state, version, content, task_ids, voted_at, next_attempt_at, updated_at, target)
       VALUES ($1, 'pending', 1, $2, $3::text[], $4, $5, $5, $6)
       ON CONFLICT (hotkey) DO UPDATE SET ${FROM_THE_PUSH},
         version = desirability_publications.version + 1,
         content = EXCLUDED.content, task_ids = EXCLUDED.task_ids, voted_at = EXCLUDED.voted_at,
         next_attempt_at = EXCLUDED.next_attempt_at, updated_at = EXCLUDED.updated_at,
         target = EXCLUDED.target`,
      [hotkey, content, taskIds, votedAt.toISOString(), now.toISOString(), target],
    );
  }

  /**
   * The same vote to be published to `target` from the push, due `now`: the progress made for
   * another target (its SHA, block, failures and their wait) is dropped, and so is any claim, so
   * that a worker still publishing to the old target records nothing (its claim is gone).
   */
  async restart(hotkey: string, target: string, now: Date, manager: EntityManager): Promise<void> {
    await manager.query(
      `UPDATE desirability_publications SET ${FROM_THE_PUSH},
         next_attempt_at = $3, claimed_by = NULL, claimed_until = NULL, updated_at = $3,
         target = $2
       WHERE hotkey = $1`,
      [hotkey, target, now.toISOString()],
    );
  }

  /** Records the target of a row written before targets were recorded, leaving the rest. */
  async recordTarget(hotkey: string, target: string, manager: EntityManager): Promise<void> {
    await manager.query(
      'UPDATE desirability_publications SET target = $2 WHERE hotkey = $1 AND target IS NULL',
      [hotkey, target],
    );
  }

  async find(
    hotkey: string,
    manager: EntityManager = this.dataSource.manager,
  ): Promise<PublicationRow | undefined> {
    const rows = await manager.query<PublicationRow[]>(
      'SELECT * FROM desirability_publications WHERE hotkey = $1',
      [hotkey],
    );
    return rows[0];
  }

  /**
   * Claims the hotkey's publication if it is due and nobody holds it (or a claim expired: its
   * replica died). The row lock with SKIP LOCKED lets exactly one of several replicas asking at
   * once have it; the others get nothing and go back to sleep.
   */
  async claim(
    hotkey: string,
    claimant: string,
    now: Date,
    until: Date,
  ): Promise<PublicationRow | undefined> {
    const result: unknown = await this.dataSource.query(
      `UPDATE desirability_publications SET claimed_by = $2, claimed_until = $4
       WHERE hotkey = (
         SELECT hotkey FROM desirability_publications
         WHERE hotkey = $1 AND state <> 'committed' AND next_attempt_at <= $3
           AND (claimed_until IS NULL OR claimed_until < $3)
         FOR UPDATE SKIP LOCKED)
       RETURNING *`,
      [hotkey, claimant, now.toISOString(), until.toISOString()],
    );
    return returningRows<PublicationRow>(result)[0];
  }

  /** The push of the claimed version succeeded; false when a newer vote replaced it. */
  async recordPushed(claim: Claim, sha: string, now: Date): Promise<boolean> {
    return this.update(
      claim,
      `state = 'pushed', commit_sha = $4, pushed_at = $5, attempts = 0, last_error = NULL,
       updated_at = $5`,
      [sha, now.toISOString()],
    );
  }

  /**
   * The claimed version is on chain, committed as `sha` (the pushed SHA, or an earlier commit
   * holding the same file, already our commitment): done, claim released.
   */
  async recordCommitted(
    claim: Claim,
    onChain: { sha: string; blockNumber: number; blockHash: string | null },
    now: Date,
    manager: EntityManager,
  ): Promise<boolean> {
    return this.update(
      claim,
      `state = 'committed', commit_sha = $7, block_number = $4, block_hash = $5, committed_at = $6,
       attempts = 0, last_error = NULL, claimed_by = NULL, claimed_until = NULL, updated_at = $6`,
      [onChain.blockNumber, onChain.blockHash, now.toISOString(), onChain.sha],
      manager,
    );
  }

  /**
   * An attempt that did not finish: retried at `nextAttemptAt`, claim released. `state` is
   * `failed`, or the current state when the chain only asked to wait (its rate limit).
   */
  async recordRetry(
    claim: Claim,
    state: 'failed' | 'pending' | 'pushed',
    error: string,
    nextAttemptAt: Date,
    now: Date,
  ): Promise<boolean> {
    return this.update(
      claim,
      `state = $4, last_error = $5, next_attempt_at = $6, attempts = attempts + 1,
       claimed_by = NULL, claimed_until = NULL, updated_at = $7`,
      [state, error.slice(0, 2000), nextAttemptAt.toISOString(), now.toISOString()],
    );
  }

  /**
   * A committed vote whose commit the Gravity repository no longer has, back at the push, due
   * `now`, with `reason` shown until the push: unless a newer vote or another replica's check
   * moved it meanwhile (then it says false).
   */
  async restartCommitted(
    row: Pick<PublicationRow, 'hotkey' | 'version' | 'commit_sha'>,
    reason: string,
    now: Date,
  ): Promise<boolean> {
    const result: unknown = await this.dataSource.query(
      `UPDATE desirability_publications SET ${PROGRESS_DROPPED},
         last_error = $4, next_attempt_at = $5, updated_at = $5
       WHERE hotkey = $1 AND version = $2 AND state = 'committed' AND commit_sha = $3`,
      [row.hotkey, row.version, row.commit_sha, reason, now.toISOString()],
    );
    return affectedCount(result) > 0;
  }

  /** Whether the claim still holds: its version is the newest vote's, and this worker's. */
  async holds(claim: Claim): Promise<boolean> {
    const rows = await this.dataSource.query<unknown[]>(
      `SELECT 1 FROM desirability_publications
       WHERE hotkey = $1 AND version = $2 AND claimed_by = $3`,
      [claim.hotkey, claim.version, claim.claimant],
    );
    return rows.length > 0;
  }

  /** Lets go of a claim (the vote was replaced, or this replica is stopping). */
  async release(claim: Claim): Promise<void> {
    await this.dataSource.query(
      `UPDATE desirability_publications SET claimed_by = NULL, claimed_until = NULL
       WHERE hotkey = $1 AND claimed_by = $2`,
      [claim.hotkey, claim.claimant],
    );
  }

  private async update(
    claim: Claim,
    assignments: string,
    values: unknown[],
    manager: EntityManager = this.dataSource.manager,
  ): Promise<boolean> {
    const result: unknown = await manager.query(
      `UPDATE desirability_publications SET ${assignments}
       WHERE hotkey = $1 AND version = $2 AND claimed_by = $3`,
      [claim.hotkey, claim.version, claim.claimant, ...values],
    );
    return affectedCount(result) > 0;
  }
}
