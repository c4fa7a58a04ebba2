import { SecretScanner } from '../security/secret-scanner';
import { redactUrl } from './redact-url';

const MASTER = 'sk_master_0123456789abcdef';
const scanner = new SecretScanner([MASTER], /sk_live_[\w-]{20,}/, 28);
const redact = (url: string | undefined) => redactUrl(url, scanner);

describe(redactUrl.name, () => {
  const key = `sk_live_${'A'.repeat(43)}`;

  it('cuts an issued key in a key path to its display prefix, encoded or not', () => {
    expect(redact(`/api/v1/keys/${key}/deactivate`)).toBe('/api/v1/keys/sk_live_AAAA…/deactivate');
    expect(redact(`/api/v1/keys/${key.replace('_', '%5F')}/deactivate`)).toBe(
      '/api/v1/keys/sk_live_AAAA…/deactivate',
    );
  });

  it('keeps a key id, which is no secret', () => {
    const id = '3f1c2a4e-8b7d-4c1a-9e2f-0a1b2c3d4e5f';
    expect(redact(`/api/v1/keys/${id}/deactivate`)).toBe(`/api/v1/keys/${id}/deactivate`);
  });

  it('replaces the master key and anything long and unknown in a path', () => {
    expect(redact(`/api/v1/keys/${MASTER}/deactivate`)).toBe('/api/v1/keys/[redacted]/deactivate');
    expect(redact(`/api/v1/tasks/${encodeURIComponent(MASTER)}/dataset`)).toBe(
      '/api/v1/tasks/[redacted]/dataset',
    );
    expect(redact('/api/v1/tasks/Some-Long-Task-Id-2026/dataset')).toBe(
      '/api/v1/tasks/[redacted]/dataset',
    );
  });

  it('redacts every query value or name that could hold a secret, in any encoding', () => {
    expect(redact(`/api/v1/health?api_key=${MASTER}&x=1`)).toBe(
      '/api/v1/health?api_key=[redacted]&x=1',
    );
    expect(redact(`/api/v1/health?api_key=sk%5Flive_${'A'.repeat(43)}`)).toBe(
      '/api/v1/health?api_key=[redacted]',
    );
    expect(redact(`/api/v1/health?${MASTER}=1`)).toBe('/api/v1/health?[redacted]=1');
    expect(redact('/api/v1/get_bytes_by_label?label=%23a-very-long-label-name')).toBe(
      '/api/v1/get_bytes_by_label?label=[redacted]',
    );
  });

  // A secret of short pieces between `/`, `&`, `=` or `?` (MASTER_KEY may hold them): each piece
  // passed alone, and the whole was logged in clear (an audit's finding).
  it('redacts a whole URL whose short pieces spell a secret together, in any encoding', () => {
    const pieces = new SecretScanner(
      ['correct/horse/battery/staple', 'abcdefgh&ijklmnop'],
      /sk_live_[\w-]{20,}/,
      28,
    );
    for (const url of [
      '/correct/horse/battery/staple',
      '/api/v1/tasks/correct/horse/battery/staple/dataset',
      '/correct/horse%2Fbattery/staple',
      '/api/v1/health?abcdefgh&ijklmnop',
      '/api/v1/health?abcdefgh&ijklm%6Eop',
    ])
      expect(redactUrl(url, pieces)).toBe('[redacted]');
    expect(redactUrl('/api/v1/health?abcdefgh&x=1', pieces)).toBe('/api/v1/health?abcdefgh&x=1');
  });

  // A key's stored hash (SHA-256, lower-case hex) passed as a route word when it began with a
  // letter, and a route-shaped run of the master key as one when it did not hold all of it (an
  // audit's finding).
  it('replaces hex of 16 characters or more and a route word holding part of a secret', () => {
    const hash = `ade05397${'0123456789abcdef'.repeat(3)}abcdef01`;
    expect(redact(`/api/v1/tasks/${hash}`)).toBe('/api/v1/tasks/[redacted]');
    expect(redact(`/api/v1/keys/${hash}/deactivate`)).toBe('/api/v1/keys/[redacted]/deactivate');
    const words = new SecretScanner(['my_master_key_is_long_and_plain'], /sk_live_[\w-]{20,}/, 28);
    expect(redactUrl('/api/v1/tasks/my_master_key_is_long', words)).toBe(
      '/api/v1/tasks/[redacted]',
    );
    expect(redactUrl('/api/v1/tasks/deadbeef', words)).toBe('/api/v1/tasks/deadbeef');
  });

  it('keeps routes and short values as they are', () => {
    expect(redact('/api/v1/get_top_labels_by_source/x')).toBe('/api/v1/get_top_labels_by_source/x');
    expect(redact('/api/v1/tasks?state=active&limit=10&offset=0')).toBe(
      '/api/v1/tasks?state=active&limit=10&offset=0',
    );
    expect(redact('/api/v1/get_bytes_by_label?label=%23bitcoin')).toBe(
      '/api/v1/get_bytes_by_label?label=%23bitcoin',
    );
    expect(redact(undefined)).toBeUndefined();
  });
});

describe(`${redactUrl.name}: long URLs`, () => {
  // A URL of many short parameters, up to Node's 16 KB of headers, was logged whole, twice a line
  // (`req.url` and the message): lines of 32 KB, which log shippers split (a review's finding).
  it('keeps the first 1,000 characters of the URL as redacted and says how many more there were', () => {
    const query = Array.from({ length: 2_000 }, (_, index) => `p${index}=${index}`).join('&');
    const url = `/api/v1/tasks?api_key=${MASTER}&${query}`;
    const redacted = `/api/v1/tasks?api_key=[redacted]&${query}`;
    expect(redact(url)).toBe(
      `${redacted.slice(0, 1_000)}… (${redacted.length - 1_000} more characters)`,
    );
    const exactly = `/api/v1/tasks?${'a=1&'.repeat(246)}b=`;
    expect(exactly).toHaveLength(1_000);
    expect(redact(exactly)).toBe(exactly);
    // One character more is cut.
    expect(redact(`${exactly}2`)).toBe(`${exactly}… (1 more characters)`);
  });

  it('still redacts a secret whose pieces run past the characters kept', () => {
    const pieces = new SecretScanner(['abcdefgh&ijklmnop'], /sk_live_[\w-]{20,}/, 28);
    const url = `/api/v1/health?${'a=1&'.repeat(249)}abcdefgh&ijklmnop`;
    expect(redactUrl(url, pieces)).toBe('[redacted]');
  });

  it('does not split a character made of two UTF-16 units where it cuts', () => {
    const url = `/api/v1/tasks?${'a=1&'.repeat(246)}b\u{1F600}${'&c=1'.repeat(25)}`;
    expect(url.codePointAt(999)).toBe(0x1f600);
    expect(redact(url)).toBe(`${url.slice(0, 999)}… (${url.length - 999} more characters)`);
  });
});

describe(`${redactUrl.name}: URLs remembered as clean`, () => {
  it('answers a repeated clean URL the same, and never remembers one that held a secret', () => {
    const url = '/api/v1/health?x=1';
    expect(redact(url)).toBe(url);
    expect(redact(url)).toBe(url);
    const leaking = `/api/v1/tasks/${MASTER}/dataset`;
    expect(redact(leaking)).toBe('/api/v1/tasks/[redacted]/dataset');
    expect(redact(leaking)).toBe('/api/v1/tasks/[redacted]/dataset');
  });

  it('remembers per scanner: a URL clean for one set of secrets is still checked for another', () => {
    // A route word (kept by the first scanner) that is the second scanner's secret.
    const word = 'abcdefghijklmnopqrstu';
    const url = `/api/v1/${word}`;
    expect(redact(url)).toBe(url);
    const other = new SecretScanner([word], /sk_live_[\w-]{20,}/, 28);
    expect(redactUrl(url, other)).toBe('/api/v1/[redacted]');
  });

  // An exception per segment or value: 4,000 segments of `%ff` cost tens of milliseconds a
  // request, logged before authentication (found beside an audit's finding on the scanner).
  it('redacts segments and values that are not UTF-8 without decodeURIComponent throwing for each', () => {
    const decode = jest.spyOn(globalThis, 'decodeURIComponent');
    try {
      const url = `/api/v1/tasks${'/%ff'.repeat(1_000)}?a=%ff&b=%e2%82`;
      expect(redact(url)).toBe(`${url.slice(0, 1_000)}… (${url.length - 1_000} more characters)`);
      const thrown = decode.mock.results.filter((result) => result.type === 'throw');
      expect(thrown.length).toBe(0);
    } finally {
      decode.mockRestore();
    }
  });
});
