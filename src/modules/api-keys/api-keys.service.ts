import { Injectable, NotFoundException } from '@nestjs/common';
import { LRUCache } from 'lru-cache';
import { ApiKeyPrincipal } from '../../common/auth/api-key-principal';
import { AppConfig } from '../../config/app-config';
import { InjectConfig } from '../../config/config.module';
import { StatusDto } from '../../common/dto/status.dto';
import {
  API_KEY_PREFIX,
  displayPrefix,
  generateApiKey,
  hashApiKey,
  secretsEqual,
} from './api-key-secret';
import { ApiKeyEntity } from './api-key.entity';
import { ApiKeyUsageRecorder } from './api-key-usage.recorder';
import { ApiKeysRepository } from './api-keys.repository';
import { KeyDeactivations } from './key-deactivations';
import { ApiKeyCreateDto } from './dto/api-key-create.dto';
import { ApiKeyCreatedDto } from './dto/api-key-created.dto';
import { ApiKeyListDto, ApiKeySummaryDto } from './dto/api-key-summary.dto';

const MASTER: ApiKeyPrincipal = { id: 'master', tier: 'validator', isMaster: true };
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

@Injectable()
export class ApiKeysService {
  private readonly masterKey: string;
  /**
   * Known keys by hash, trusted for `keyCacheTtlMs`: the hot path needs no query once a key is
   * cached. A deactivation through another replica drops the key at once when it is announced
   * over Redis (KeyDeactivations), else within the TTL. Concurrent misses for the same key share
   * one query. Unknown keys are not cached, so a new key works at once.
   */
  private readonly cache: LRUCache<string, ApiKeyEntity> | undefined;

  constructor(
    private readonly repository: ApiKeysRepository,
    private readonly usage: ApiKeyUsageRecorder,
    private readonly deactivations: KeyDeactivations,
    @InjectConfig() config: AppConfig,
  ) {
    if (!config.masterKey) throw new Error('The master key must be resolved before the app starts');
    this.masterKey = config.masterKey;
    const ttl = config.auth.keyCacheTtlMs;
    this.cache =
      ttl > 0
        ? new LRUCache<string, ApiKeyEntity>({
            max: 10_000,
            ttl,
            fetchMethod: async (hash) => (await this.repository.findByHash(hash)) ?? undefined,
          })
        : undefined;
    deactivations.onDeactivated((keyId) => this.forget(keyId));
  }

  /** Resolves a presented key to its principal, or null when it is unknown or deactivated. */
  async authenticate(presented: string): Promise<ApiKeyPrincipal | null> {
    if (secretsEqual(presented, this.masterKey)) return MASTER;
    if (!presented.startsWith(API_KEY_PREFIX)) return null;
    const hash = hashApiKey(presented);
    const key = this.cache ? await this.cache.fetch(hash) : await this.repository.findByHash(hash);
    if (!key?.isActive) return null;
    this.usage.record(key.id);
    return { id: key.id, tier: key.tier, isMaster: false };
  }

  async create(request: ApiKeyCreateDto): Promise<ApiKeyCreatedDto> {
    const key = generateApiKey();
    const saved = await this.repository.insert({
      name: request.name,
      keyHash: hashApiKey(key),
      prefix: displayPrefix(key),
      tier: request.tier ?? 'regular',
    });
    return {
      key,
      name: saved.name,
      id: saved.id,
      tier: saved.tier,
      created_at: saved.createdAt.toISOString(),
    };
  }

  async list(): Promise<ApiKeyListDto> {
    await this.usage.flush();
    const keys = await this.repository.listAll();
    return { keys: keys.map(toSummary) };
  }

  /** Accepts the full key or its id; idempotent for an already deactivated key. */
  async deactivate(keyOrId: string): Promise<StatusDto> {
    const key = await this.findByKeyOrId(keyOrId);
    if (!key) throw new NotFoundException('API key not found');
    await this.repository.deactivate(key.id);
    this.cache?.delete(key.keyHash);
    await this.deactivations.publish(key.id);
    return { status: 'success' };
  }

  /** Drops a key from the cache by its id (announced by the replica that deactivated it). */
  private forget(keyId: string): void {
    if (!this.cache) return;
    for (const [hash, key] of this.cache.entries()) if (key.id === keyId) this.cache.delete(hash);
  }

  private findByKeyOrId(keyOrId: string): Promise<ApiKeyEntity | null> {
    if (keyOrId.startsWith(API_KEY_PREFIX)) return this.repository.findByHash(hashApiKey(keyOrId));
    if (UUID.test(keyOrId)) return this.repository.findById(keyOrId);
    return Promise.resolve(null);
  }
}

function toSummary(key: ApiKeyEntity): ApiKeySummaryDto {
  return {
    id: key.id,
    name: key.name,
    prefix: key.prefix,
    tier: key.tier,
    created_at: key.createdAt.toISOString(),
    last_used_at: key.lastUsedAt?.toISOString() ?? null,
    is_active: key.isActive,
  };
}
