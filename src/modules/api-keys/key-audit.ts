import { Logger } from '@nestjs/common';
import { ApiKeyEntity } from './api-key.entity';

/**
 * A key as its audit lines name it: id, name, class and settings. Never the key, its hash or its
 * display prefix. The name is the master key's label for it (the one principal that manages
 * keys), refused before the handler if it holds a secret, and scanned with the rest of the line.
 */
function audited(key: ApiKeyEntity) {
  return {
    id: key.id,
    name: key.name,
    tier: key.tier,
    expires_at: key.expiresAt?.toISOString() ?? null,
    rate_limit: key.rateLimit,
  };
}

type Audited = ReturnType<typeof audited>;
type Changes = Partial<Record<keyof Audited | 'is_active', { from: unknown; to: unknown }>>;

/**
 * One line per change to a key, at info, under the request that made it (its `req.id`):
 * `audit` says what was done, `key` to which key, `changes` what changed (from, to), `by` which
 * principal did it (`master`, or a key's id). Written once the change is stored, whether or not
 * its answer reaches the client (docs/decisions.md, "Metrics and logs"); a change whose client
 * left before that is not made, and says so (stillWanted).
 */
export class KeyAudit {
  private readonly logger = new Logger('ApiKeysService');

  created(key: ApiKeyEntity, by: string): void {
    this.logger.log(
      { audit: 'key_created', key: audited(key), by },
      `key ${key.id} created (tier ${key.tier}) by ${by}`,
    );
  }

  updated(before: ApiKeyEntity, after: ApiKeyEntity, by: string): void {
    const was = audited(before);
    const is = audited(after);
    const changes: Changes = {};
    for (const field of ['name', 'expires_at', 'rate_limit'] as const)
      if (was[field] !== is[field]) changes[field] = { from: was[field], to: is[field] };
    const changed = Object.keys(changes).join(', ') || 'nothing changed';
    this.logger.log(
      { audit: 'key_updated', key: is, changes, by },
      `key ${after.id} updated (${changed}) by ${by}`,
    );
  }

  /** `key` as read before its deactivation: asked again, the line says it already was. */
  deactivated(key: ApiKeyEntity, by: string): void {
    const changes: Changes = key.isActive ? { is_active: { from: true, to: false } } : {};
    this.logger.log(
      { audit: 'key_deactivated', key: audited(key), changes, by },
      key.isActive
        ? `key ${key.id} deactivated by ${by}`
        : `key ${key.id} deactivated by ${by}: it already was`,
    );
  }
}
