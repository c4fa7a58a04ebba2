import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, Repository } from 'typeorm';
import { ApiKeyEntity } from './api-key.entity';
import { ApiKeyTier } from '../../common/auth/api-key-tier';

export interface NewApiKey {
  name: string;
  keyHash: string;
  prefix: string;
  tier: ApiKeyTier;
  expiresAt: Date | null;
  rateLimit: number | null;
}

/** What an update may change; undefined leaves a field as it is, null clears it. */
export interface ApiKeyChanges {
  name?: string;
  expiresAt?: Date | null;
  rateLimit?: number | null;
}

/** Which keys the key list shows: all, or only those (not) deactivated. */
export interface ApiKeyListFilter {
  isActive?: boolean;
}

@Injectable()
export class ApiKeysRepository {
  private readonly keys: Repository<ApiKeyEntity>;

  constructor(@InjectDataSource() private readonly dataSource: DataSource) {
    this.keys = dataSource.getRepository(ApiKeyEntity);
  }

  /** `beforeCommit` runs in the insert's transaction, last: a throw there stores nothing. */
  insert(key: NewApiKey, beforeCommit: () => void = () => undefined): Promise<ApiKeyEntity> {
    return this.dataSource.transaction(async (manager) => {
      const keys = manager.getRepository(ApiKeyEntity);
      const saved = await keys.save(keys.create({ ...key, isActive: true }));
      beforeCommit();
      return saved;
    });
  }

  findByHash(keyHash: string): Promise<ApiKeyEntity | null> {
    return this.keys.findOneBy({ keyHash });
  }

  findById(id: string): Promise<ApiKeyEntity | null> {
    return this.keys.findOneBy({ id });
  }

  /**
   * One page of the keys the filter selects, oldest first, and how many it selects in all, read
   * from one snapshot (REPEATABLE READ): the count is a second query, and a key created or
   * deactivated between the two made the total disagree with the pages.
   */
  list(
    filter: ApiKeyListFilter,
    limit: number | undefined,
    offset: number,
  ): Promise<[ApiKeyEntity[], number]> {
    return this.dataSource.transaction('REPEATABLE READ', (manager) =>
      manager.getRepository(ApiKeyEntity).findAndCount({
        where: filter.isActive === undefined ? {} : { isActive: filter.isActive },
        order: { createdAt: 'ASC', id: 'ASC' },
        take: limit,
        skip: offset,
      }),
    );
  }

  /**
   * Applies the changes to an active key: the key as it was just before (locked, so that no other
   * change comes between) and as it is now; null when the key is not active. `beforeCommit` runs
   * in the update's transaction, last: a throw there changes nothing.
   */
  updateActive(
    id: string,
    changes: ApiKeyChanges,
    beforeCommit: () => void = () => undefined,
  ): Promise<{ before: ApiKeyEntity; after: ApiKeyEntity } | null> {
    const defined = Object.fromEntries(
      Object.entries(changes).filter(([, value]) => value !== undefined),
    ) as ApiKeyChanges;
    return this.dataSource.transaction(async (manager) => {
      const keys = manager.getRepository(ApiKeyEntity);
      const before = await keys.findOne({
        where: { id, isActive: true },
        lock: { mode: 'pessimistic_write' },
      });
      if (!before) return null;
      await keys.update({ id }, defined);
      const after = (await keys.findOneBy({ id }))!;
      beforeCommit();
      return { before, after };
    });
  }

  async deactivate(id: string): Promise<void> {
    await this.keys.query(
      `UPDATE api_keys SET is_active = false, deactivated_at = COALESCE(deactivated_at, now())
       WHERE id = $1`,
      [id],
    );
  }

  /** One statement for a whole batch of usage timestamps (see ApiKeyUsageRecorder). */
  async recordLastUsed(lastUsed: ReadonlyMap<string, Date>): Promise<void> {
    if (lastUsed.size === 0) return;
    const ids = [...lastUsed.keys()];
    const times = [...lastUsed.values()].map((at) => at.toISOString());
    await this.keys.query(
      `UPDATE api_keys AS k SET last_used_at = GREATEST(k.last_used_at, u.used_at)
       FROM unnest($1::uuid[], $2::timestamptz[]) AS u(id, used_at)
       WHERE k.id = u.id`,
      [ids, times],
    );
  }
}
