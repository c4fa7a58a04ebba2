import { redactUrl } from './redact-url';

describe(redactUrl.name, () => {
  const key = `sk_live_${'A'.repeat(43)}`;

  it('cuts an issued key in a key path to its display prefix', () => {
    expect(redactUrl(`/api/v1/keys/${key}/deactivate`)).toBe(
      '/api/v1/keys/sk_live_AAAA…/deactivate',
    );
  });

  it('keeps a key id, which is no secret', () => {
    const id = '3f1c2a4e-8b7d-4c1a-9e2f-0a1b2c3d4e5f';
    expect(redactUrl(`/api/v1/keys/${id}/deactivate`)).toBe(`/api/v1/keys/${id}/deactivate`);
  });

  it('replaces anything else in a key path whole (the master key, a mistyped secret)', () => {
    expect(redactUrl('/api/v1/keys/sk_master_0123456789abcdef/deactivate')).toBe(
      '/api/v1/keys/[redacted]/deactivate',
    );
  });

  it('cuts issued keys anywhere else in the URL', () => {
    expect(redactUrl(`/api/v1/health?api_key=${key}&x=1`)).toBe(
      '/api/v1/health?api_key=sk_live_AAAA…&x=1',
    );
  });

  it('leaves other URLs alone', () => {
    expect(redactUrl('/api/v1/get_top_labels_by_source/x')).toBe(
      '/api/v1/get_top_labels_by_source/x',
    );
    expect(redactUrl(undefined)).toBeUndefined();
  });
});
