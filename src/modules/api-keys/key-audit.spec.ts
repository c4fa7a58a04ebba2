import { Logger } from '@nestjs/common';
import { ApiKeyEntity } from './api-key.entity';
import { KeyAudit } from './key-audit';

const KEY: ApiKeyEntity = {
  id: '3a49b7bb-48be-448d-915e-760ac904253e',
  name: 'partner',
  keyHash: 'f'.repeat(64),
  prefix: 'sk_live_AbCd',
  tier: 'regular',
  isActive: true,
  createdAt: new Date('2026-11-01T00:00:00Z'),
  lastUsedAt: null,
  deactivatedAt: null,
  expiresAt: new Date('2099-12-31T23:59:59Z'),
  rateLimit: 200,
};

describe(KeyAudit.name, () => {
  let lines: unknown[][];
  beforeEach(() => {
    lines = [];
    jest.spyOn(Logger.prototype, 'log').mockImplementation((...line: unknown[]) => {
      lines.push(line);
    });
  });
  afterEach(() => jest.restoreAllMocks());

  it('names only what changed, and says when nothing did', () => {
    const audit = new KeyAudit();
    audit.updated(KEY, { ...KEY, expiresAt: null }, 'master');
    audit.updated(KEY, { ...KEY }, 'master');
    expect(lines).toEqual([
      [
        expect.objectContaining({
          changes: { expires_at: { from: '2099-12-31T23:59:59.000Z', to: null } },
        }),
        `key ${KEY.id} updated (expires_at) by master`,
      ],
      [
        expect.objectContaining({ changes: {} }),
        `key ${KEY.id} updated (nothing changed) by master`,
      ],
    ]);
  });

  it('says a key deactivated again already was, with no change', () => {
    new KeyAudit().deactivated({ ...KEY, isActive: false }, 'master');
    expect(lines).toEqual([
      [
        expect.objectContaining({ audit: 'key_deactivated', changes: {} }),
        `key ${KEY.id} deactivated by master: it already was`,
      ],
    ]);
  });

  it('never names the key hash or its display prefix', () => {
    const audit = new KeyAudit();
    audit.created(KEY, 'master');
    audit.updated(KEY, { ...KEY, name: 'renamed' }, 'master');
    audit.deactivated(KEY, 'master');
    const written = JSON.stringify(lines);
    expect(written).not.toContain(KEY.keyHash);
    expect(written).not.toContain(KEY.prefix);
  });
});
