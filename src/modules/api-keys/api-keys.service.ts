import { timingSafeEqual } from 'node:crypto';
import { ConflictException, Inject, Injectable, NotFoundException } from '@nestjs/common';
import { ApiKeyPrincipal } from '../../common/auth/api-key-principal';
import { Clock } from '../../common/clock/clock';
import { DatabaseTimeoutError, isDatabaseUnavailable } from '../../common/database-unavailable';
import { within } from '../../common/within';
import { SingleFlight } from '../../common/single-flight';
import { validationError } from '../../common/errors/validation-error-item';
import { AppConfig } from '../../config/app-config';
import { InjectConfig } from '../../config/config.module';
import { StatusDto } from '../../common/dto/status.dto';
import { stillWanted } from '../../common/http/client-gone';
import { parseRfc3339DateTime } from '../../common/validation/iso-date';
import {
  KEY_BUDGET_SCOPE,
  keyBudgetCounter,
  keyBudgetOf,
} from '../../common/throttling/key-budget';
import {
  RATE_LIMIT_SETTINGS,
  RateLimitSettings,
} from '../../common/throttling/rate-limit-settings';
import {
  InjectRateLimitStorage,
  RateLimitStorage,
} from '../../common/throttling/rate-limit-storage';
import {
  API_KEY_PREFIX,
  displayPrefix,
  generateApiKey,
  hashApiKey,
  secretDigest,
} from '../../common/security/api-key-secret';
import { ApiKeyEntity } from './api-key.entity';
import { ApiKeyUsageRecorder } from './api-key-usage.recorder';
import { ApiKeyChanges, ApiKeyListFilter, ApiKeysRepository } from './api-keys.repository';
import { KeyAudit } from './key-audit';
import { KeyCache } from './key-cache';
import { KeyChanges } from './key-changes';
import { ApiKeyCreateDto } from './dto/api-key-create.dto';
import { ApiKeyCreatedDto } from './dto/api-key-created.dto';
import { ApiKeyDetailDto } from './dto/api-key-detail.dto';
import { ApiKeyListDto, ApiKeySummaryDto } from './dto/api-key-summary.dto';
import { toSummary, toUsage } from './key-views';
import { ApiKeyUpdateDto } from './dto/api-key-update.dto';

/** The service's refusals, as the controller documents them. */
export const KEY_ERRORS = {
  notFound: 'API key not found',
  deactivated: 'API key is deactivated',
};

const MASTER: ApiKeyPrincipal = {
  id: 'master',
  tier: 'validator',
  isMaster: true,
  rateLimit: null,
};
/**
 * How long a request waits for a key's lookup before it is answered from the key's last read
 * (`lastRead`). A lookup by primary key answers in milliseconds; one that has not answered in
 * half a second is a database in trouble, and health, polled with the balancer's own key, must
 * still answer (docs/decisions.md, "Outages").
 */
export const KEY_LOOKUP_PATIENCE_MS = 500;
/** How long a key's last read may stand in for a lookup the database does not answer. */
export const LAST_READ_TRUSTED_MS = 10 * 60_000;

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * A genuine key refused: past its expiry, or deactivated. Its id (listed by `GET /keys`, not a
 * secret) goes on the request's line: whose key stopped working, and who still uses a key
 * revoked after a leak (a log audit's finding: the line said neither).
 */
export interface RefusedKey {
  refused: 'expired' | 'deactivated';
  id: string;
}

/**
 * What authenticating a key gives: who it is, a genuine key refused (RefusedKey), or null for
 * no key of ours. A deactivated key and no key are answered alike; the request's line tells
 * them apart.
 */
export type Authentication = ApiKeyPrincipal | RefusedKey | null;

@Injectable()
export class ApiKeysService {
  private readonly audit = new KeyAudit();
  /** Digest of the master key, made once: each request's key is hashed once, and only once. */
  private readonly masterDigest: Buffer;
  /**
   * Known keys by hash, trusted for `keyCacheTtlMs`: the hot path needs no query once a key is
   * cached. A change through another replica (deactivation, new expiry or limit) drops the key at
   * once when it is announced over Redis (KeyChanges), else within the TTL. Unknown keys are not
   * cached, so a new key works at once.
   */
  private readonly cache: KeyCache | undefined;
  /**
   * Lookups running, by hash: concurrent misses for the same key share one query. Kept out of the
   * cache: lru-cache's own `fetch` rejects its waiters with "deleted" when its entry is deleted
   * mid-lookup and the lookup found nothing (an unknown key), which the guard answered with a 500
   * instead of a counted 401 (found by a review).
   */
  private readonly lookingUp = new SingleFlight<string, ApiKeyEntity | null>();
  /**
   * Each key's last read, for `LAST_READ_TRUSTED_MS`: what a request is answered with when the
   * lookup does not answer within `KEY_LOOKUP_PATIENCE_MS` or fails for the database (frozen,
   * down). Dropped with the cache's entry on a change, so it never outlives one this process
   * heard of.
   */
  private readonly lastRead: KeyCache | undefined;
  /** Every wait on a lookup ends by then: a 503, as a wait for a pooled connection does. */
  private readonly lookupBoundMs: number;
  /**
   * How many key changes this process has seen (made here or announced). A lookup that sees it move
   * while it reads may have read a changed key's old row: which key it reads is known only once it
   * has read it (a change is announced by id), so it reads again and caches nothing (lookUp).
   */
  private changesSeen = 0;

  constructor(
    private readonly repository: ApiKeysRepository,
    private readonly usage: ApiKeyUsageRecorder,
    private readonly changes: KeyChanges,
    private readonly clock: Clock,
    @InjectRateLimitStorage() private readonly budgets: RateLimitStorage,
    @Inject(RATE_LIMIT_SETTINGS) private readonly budgetSettings: RateLimitSettings,
    @InjectConfig() config: AppConfig,
  ) {
    if (!config.masterKey) throw new Error('The master key must be resolved before the app starts');
    this.masterDigest = secretDigest(config.masterKey);
    const ttl = config.auth.keyCacheTtlMs;
    this.cache = ttl > 0 ? new KeyCache(10_000, ttl) : undefined;
    this.lastRead = ttl > 0 ? new KeyCache(10_000, LAST_READ_TRUSTED_MS) : undefined;
    this.lookupBoundMs = config.database.connectTimeoutMs;
    changes.onChanged((keyId) => this.forget(keyId));
  }

  /**
   * Resolves a presented key: its principal, `expired` past its expiry, `deactivated`, or null
   * if unknown. The master key and cached keys (nearly every request) are answered at once, not
   * through a promise, so that ApiKeyGuard stays synchronous on the hot path.
   */
  authenticate(presented: string): Authentication | Promise<Authentication> {
    // One digest serves both the constant-time master comparison and the lookup by hash.
    const digest = secretDigest(presented);
    if (timingSafeEqual(digest, this.masterDigest)) return MASTER;
    if (!presented.startsWith(API_KEY_PREFIX)) return null;
    const hash = digest.toString('hex');
    const cached = this.cache?.get(hash);
    if (cached) return this.authenticationOf(cached);
    const found = this.cache ? this.lookUp(hash) : this.repository.findByHash(hash);
    return this.answerOf(found, this.lastRead?.get(hash)).then((key) =>
      this.authenticationOf(key ?? undefined),
    );
  }

  /**
   * The lookup's answer, waited for at most `lookupBoundMs` (then a 503). A key read before is
   * answered as last read when the lookup takes longer than `KEY_LOOKUP_PATIENCE_MS` or fails for
   * the database: a lookup that hangs (a frozen Postgres) would otherwise hold every request of the
   * key, health's included, each joining it in `lookingUp`, for as long as Postgres did not answer.
   */
  private async answerOf(
    found: Promise<ApiKeyEntity | null>,
    last: ApiKeyEntity | undefined,
  ): Promise<ApiKeyEntity | null> {
    const bound = (ms: number) =>
      within(found, ms, () => new DatabaseTimeoutError('API key lookup', ms));
    if (!last) return bound(this.lookupBoundMs);
    try {
      return await bound(Math.min(KEY_LOOKUP_PATIENCE_MS, this.lookupBoundMs));
    } catch (error) {
      if (isDatabaseUnavailable(error)) return last;
      throw error;
    }
  }

  /** The key by hash through the cache's lookups: one query for concurrent misses of a key. */
  private lookUp(hash: string): Promise<ApiKeyEntity | null> {
    return this.lookingUp.run(hash, () => this.readForCache(hash));
  }

  /**
   * Reads the key and caches it, unless a change was seen while it was read: the row read may
   * then be the old one, so the key is read again, after the change, and that answer is not
   * cached (a further change may have raced it). Only the lookups running at a change read twice.
   */
  private async readForCache(hash: string): Promise<ApiKeyEntity | null> {
    const seen = this.changesSeen;
    const key = await this.repository.findByHash(hash);
    if (seen !== this.changesSeen) return this.repository.findByHash(hash);
    if (key) {
      this.cache!.set(hash, key);
      this.lastRead!.set(hash, key);
    }
    return key;
  }

  private authenticationOf(key: ApiKeyEntity | undefined): Authentication {
    if (!key) return null;
    if (!key.isActive) return { refused: 'deactivated', id: key.id };
    const now = this.clock.now();
    if (key.expiresAt && key.expiresAt <= now) return { refused: 'expired', id: key.id };
    this.usage.record(key.id, now);
    return { id: key.id, tier: key.tier, isMaster: false, rateLimit: key.rateLimit };
  }

  /** `by`: the principal asking (its id as listed, or `master`), for the audit line. */
  async create(
    request: ApiKeyCreateDto,
    by: string,
    gone?: AbortSignal,
  ): Promise<ApiKeyCreatedDto> {
    const key = generateApiKey();
    const saved = await this.repository.insert(
      {
        name: request.name,
        keyHash: hashApiKey(key),
        prefix: displayPrefix(key),
        tier: request.tier ?? 'regular',
        expiresAt: expiryOf(request.expires_at) ?? null,
        rateLimit: request.rate_limit ?? null,
      },
      () => stillWanted(gone, 'a new key'),
    );
    // Not made for a client that left before the insert committed (`gone`); made for one that
    // leaves after it, whose answer is lost: it never got this key, which works all the same.
    // The line (with the request's id, as every line logged while handling a request) names it
    // by id, never by the key, so that an operator can find it and deactivate it.
    this.audit.created(saved, by);
    return {
      key,
      name: saved.name,
      id: saved.id,
      tier: saved.tier,
      created_at: saved.createdAt.toISOString(),
      expires_at: saved.expiresAt?.toISOString() ?? null,
      rate_limit: saved.rateLimit,
    };
  }

  /** One page of the keys the filter selects, oldest first (every key without `limit`). */
  async list(
    filter: ApiKeyListFilter,
    limit: number | undefined,
    offset: number,
  ): Promise<{ page: ApiKeyListDto; total: number }> {
    await this.usage.settled();
    const [keys, total] = await this.repository.list(filter, limit, offset);
    return { page: { keys: keys.map(toSummary) }, total };
  }

  /**
   * One key, by id, with its budget as it stands: read, not counted, from where RateLimitGuard
   * counts it (shared by every replica when they share Redis).
   */
  async get(id: string): Promise<ApiKeyDetailDto> {
    await this.usage.settled();
    const key = await this.findById(id);
    if (!key) throw new NotFoundException(KEY_ERRORS.notFound);
    const count = await this.budgets.peek(keyBudgetCounter(key.id), KEY_BUDGET_SCOPE);
    const limit = keyBudgetOf(key, this.budgetSettings);
    return { ...toSummary(key), usage: toUsage(limit, count, this.budgetSettings.windowSeconds) };
  }

  /**
   * Changes a key's name, expiry or own limit (absent fields stay, null clears). Only by id:
   * unlike deactivation, nothing justifies a secret in this URL. A deactivated key is final: 409.
   */
  async update(
    id: string,
    request: ApiKeyUpdateDto,
    by: string,
    gone?: AbortSignal,
  ): Promise<ApiKeySummaryDto> {
    const changes: ApiKeyChanges = {
      name: request.name,
      expiresAt: expiryOf(request.expires_at),
      rateLimit: request.rate_limit,
    };
    if (Object.values(changes).every((value) => value === undefined))
      throw validationError(['body'], 'give at least one of name, expires_at and rate_limit');
    const key = await this.findById(id);
    if (!key) throw new NotFoundException(KEY_ERRORS.notFound);
    await this.usage.settled();
    // Only an active key is updated, so a deactivation racing this update wins.
    const updated = key.isActive
      ? await this.repository.updateActive(key.id, changes, () =>
          stillWanted(gone, `a change of key ${key.id}`),
        )
      : null;
    if (!updated) throw new ConflictException(KEY_ERRORS.deactivated);
    // What this change changed, from the row it locked: the row read above may be older than
    // another change made since, which this line claimed as its own (a live audit).
    this.audit.updated(updated.before, updated.after, by);
    await this.announce(updated.after);
    return toSummary(updated.after);
  }

  /** Accepts the full key or its id; idempotent for an already deactivated key. */
  async deactivate(keyOrId: string, by: string): Promise<StatusDto> {
    const key = await this.findByKeyOrId(keyOrId);
    if (!key) throw new NotFoundException(KEY_ERRORS.notFound);
    await this.repository.deactivate(key.id);
    this.audit.deactivated(key, by);
    await this.announce(key);
    return { status: 'success' };
  }

  /** Drops the key here at once and tells the other replicas to do the same. */
  private async announce(key: ApiKeyEntity): Promise<void> {
    this.forget(key.id);
    await this.changes.publish(key.id);
  }

  /**
   * Drops a changed key from the cache by its id (changed here, or announced by the replica that
   * changed it), and marks every lookup in flight as having raced a change (`changesSeen`): one
   * that had read the old row cached it for `keyCacheTtlMs` (found by an audit). By the caches'
   * index of ids, not a scan of them: this runs on every replica for every change.
   */
  private forget(keyId: string): void {
    this.changesSeen += 1;
    this.cache?.deleteById(keyId);
    this.lastRead?.deleteById(keyId);
  }

  private findByKeyOrId(keyOrId: string): Promise<ApiKeyEntity | null> {
    if (keyOrId.startsWith(API_KEY_PREFIX)) return this.repository.findByHash(hashApiKey(keyOrId));
    return this.findById(keyOrId);
  }

  /** Anything that is not a UUID cannot be a key id: 404 without a query. */
  private findById(id: string): Promise<ApiKeyEntity | null> {
    return UUID.test(id) ? this.repository.findById(id) : Promise.resolve(null);
  }
}

/**
 * `expires_at` as an instant (null clears, undefined leaves as is). Validation checked it is in
 * the future (EXPIRES_IN_THE_FUTURE, with the request's other fields).
 */
function expiryOf(value: string | null | undefined): Date | null | undefined {
  if (value === undefined || value === null) return value;
  return parseRfc3339DateTime(value)!;
}
