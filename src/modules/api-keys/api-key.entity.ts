import { Check, Column, CreateDateColumn, Entity, Index, PrimaryGeneratedColumn } from 'typeorm';
import { ApiKeyTier } from '../../common/auth/api-key-tier';

/**
 * Only the SHA-256 of a key is stored; the key itself is shown once, at creation. The index and
 * CHECKs declare what the migrations built (test/medium/entity-schema.medium-spec.ts): left out,
 * TypeORM's generator would drop them (docs/decisions.md, "Start-up").
 */
@Entity('api_keys')
@Index('api_keys_key_hash_idx', ['keyHash'], { unique: true })
@Check('api_keys_tier_check', `tier IN ('regular', 'validator')`)
@Check('api_keys_rate_limit_check', 'rate_limit BETWEEN 1 AND 1000000')
export class ApiKeyEntity {
  @PrimaryGeneratedColumn('uuid')
  id: string;

  @Column({ type: 'varchar', length: 100 })
  name: string;

  @Column({ name: 'key_hash', type: 'char', length: 64 })
  keyHash: string;

  @Column({ type: 'varchar', length: 16 })
  prefix: string;

  @Column({ type: 'varchar', length: 16 })
  tier: ApiKeyTier;

  @Column({ name: 'is_active', type: 'boolean', default: true })
  isActive: boolean;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt: Date;

  @Column({ name: 'last_used_at', type: 'timestamptz', nullable: true })
  lastUsedAt: Date | null;

  @Column({ name: 'deactivated_at', type: 'timestamptz', nullable: true })
  deactivatedAt: Date | null;

  /** Refused as `API key expired` from this instant on; null = never. */
  @Column({ name: 'expires_at', type: 'timestamptz', nullable: true })
  expiresAt: Date | null;

  /** Requests per rate-limit window, overriding the class's budget; null = the class's. */
  @Column({ name: 'rate_limit', type: 'integer', nullable: true })
  rateLimit: number | null;
}
