import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { inJobOrder, JobView } from './desirability.types';

/** A validator counted in the network aggregate. */
export interface CountedValidator {
  hotkey: string;
  /** Null when the metagraph has no stakes. */
  stake: number | null;
  /** Its part of the validators' 70 %. */
  share: number;
  sha: string;
  block: number;
  /** Jobs of its file counted (0: none is one we count; its share still counts). */
  jobs: number;
  /** Entries of its file not counted, or counted otherwise than written, and why. */
  notes?: string[];
}

/** A validator with a commitment that is no vote, and why. */
export interface SkippedValidator {
  hotkey: string;
  reason: string;
  sha?: string;
  block?: number;
}

/** The network aggregate as last computed. */
export interface StoredNetworkAggregate {
  computedAt: Date;
  /** The chain's block the stakes were read at (the metagraph's), when known. */
  block: number | null;
  /**
   * Unrounded (`unroundedAggregate`), heaviest first; `get_desirabilities` rounds them. One
   * stored by an earlier release holds them rounded, until the next aggregate replaces it.
   */
  jobs: JobView[];
  validators: CountedValidator[];
  skipped: SkippedValidator[];
}

/** What a read of the stored aggregate answers with: which write of the row it read. */
interface RowVersion {
  /** Postgres's `xmin` of the row: each write of it, by any replica or release, changes it. */
  version: string;
  computedAt: Date;
}

/** The stored aggregate's jobs, as `get_desirabilities` lists them. */
export type StoredAggregateJobs = RowVersion & Pick<StoredNetworkAggregate, 'jobs'>;

/** The stored aggregate without its jobs, as `GET /api/v1/desirabilities/network` shows it. */
export type StoredAggregateStatus = RowVersion &
  Pick<StoredNetworkAggregate, 'block' | 'validators' | 'skipped'>;

/**
 * `gravity_files`: preferences files fetched from the Gravity repository, by hotkey and commit
 * (a commit never changes, so each is fetched once). `network_desirabilities`: the last good
 * network aggregate.
 */
@Injectable()
export class NetworkVotesRepository {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  /**
   * The cached file: its text, null when the commit has no such file, undefined when not cached.
   */
  async findFile(hotkey: string, sha: string): Promise<string | null | undefined> {
    const rows = await this.dataSource.query<{ content: string | null }[]>(
      'SELECT content FROM gravity_files WHERE hotkey = $1 AND sha = $2',
      [hotkey, sha],
    );
    return rows.length === 0 ? undefined : rows[0].content;
  }

  async saveFile(hotkey: string, sha: string, content: string | null): Promise<void> {
    await this.dataSource.query(
      `INSERT INTO gravity_files (hotkey, sha, content) VALUES ($1, $2, $3)
       ON CONFLICT (hotkey, sha) DO NOTHING`,
      [hotkey, sha, content],
    );
  }

  async saveAggregate(aggregate: StoredNetworkAggregate): Promise<void> {
    await this.dataSource.query(
      `INSERT INTO network_desirabilities (id, computed_at, block, jobs, validators, skipped)
       VALUES (1, $1, $2, $3::jsonb, $4::jsonb, $5::jsonb)
       ON CONFLICT (id) DO UPDATE SET computed_at = EXCLUDED.computed_at, block = EXCLUDED.block,
         jobs = EXCLUDED.jobs, validators = EXCLUDED.validators, skipped = EXCLUDED.skipped`,
      [
        aggregate.computedAt.toISOString(),
        aggregate.block,
        JSON.stringify(aggregate.jobs),
        JSON.stringify(aggregate.validators),
        JSON.stringify(aggregate.skipped),
      ],
    );
  }

  /** The stored aggregate's row version, or undefined before the first aggregate. */
  async aggregateVersion(): Promise<string | undefined> {
    const rows = await this.dataSource.query<{ version: string }[]>(
      'SELECT xmin::text AS version FROM network_desirabilities',
    );
    return rows[0]?.version;
  }

  async findAggregateJobs(): Promise<StoredAggregateJobs | undefined> {
    const rows = await this.dataSource.query<
      { version: string; computed_at: Date; jobs: JobView[] }[]
    >('SELECT xmin::text AS version, computed_at, jobs FROM network_desirabilities');
    const [row] = rows;
    if (!row) return undefined;
    // jsonb keeps keys in its own order: listed as every other aggregate lists them.
    const jobs = row.jobs.map(inJobOrder);
    return { version: row.version, computedAt: new Date(row.computed_at), jobs };
  }

  async findAggregateStatus(): Promise<StoredAggregateStatus | undefined> {
    const rows = await this.dataSource.query<
      {
        version: string;
        computed_at: Date;
        block: number | null;
        validators: CountedValidator[];
        skipped: SkippedValidator[];
      }[]
    >(
      `SELECT xmin::text AS version, computed_at, block, validators, skipped
       FROM network_desirabilities`,
    );
    const [row] = rows;
    if (!row) return undefined;
    return {
      version: row.version,
      computedAt: new Date(row.computed_at),
      block: row.block,
      validators: row.validators,
      skipped: row.skipped,
    };
  }
}
