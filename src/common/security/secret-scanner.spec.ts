import { REDACTED, SecretScanner } from './secret-scanner';

const MASTER = 'master-key-0123456789abcdef';
const TOKEN = 'metrics-token-fedcba9876543210';
const ISSUED = 'sk_live_Q2hlY2tpbmcgdGhlIGlzc3VlZCBrZXkgcGF0dGVybg';
const scanner = new SecretScanner([MASTER, TOKEN, undefined], /sk_live_[\w-]{20,}/, 28);

const percentAll = (text: string) =>
  [...Buffer.from(text)].map((byte) => `%${byte.toString(16).padStart(2, '0')}`).join('');

describe(SecretScanner.name, () => {
  it.each([
    ['raw', (s: string) => s],
    ['percent-encoded', (s: string) => percentAll(s)],
    ['upper-case percent-encoded', (s: string) => percentAll(s).toUpperCase()],
    ['double percent-encoded', (s: string) => percentAll(s).replace(/%/g, '%25')],
    ['triple percent-encoded', (s: string) => percentAll(s).replace(/%/g, '%2525')],
    ['partly encoded', (s: string) => s.replace(/_/g, '%5F').replace(/-/g, '%2d')],
    ['base64', (s: string) => Buffer.from(s).toString('base64')],
    ['base64url', (s: string) => Buffer.from(s).toString('base64url')],
    [
      'base64 of a header value',
      (s: string) => `Basic ${Buffer.from(`user:${s}`).toString('base64')}`,
    ],
    ['base64 glued to a word', (s: string) => `key${Buffer.from(`xx${s}`).toString('base64')}`],
    ['base64 of percent-encoded', (s: string) => Buffer.from(percentAll(s)).toString('base64')],
    [
      'percent-encoded base64',
      (s: string) => encodeURIComponent(Buffer.from(s).toString('base64')),
    ],
  ])('finds every secret %s, inside other text', (_, encode) => {
    for (const secret of [MASTER, TOKEN, ISSUED]) {
      const text = `GET /api/v1/tasks/${encode(secret)}/dataset?x=1 404`;
      expect(scanner.contains(text)).toBe(true);
      const scrubbed = scanner.scrub(text);
      expect(scrubbed).toContain(REDACTED);
      expect(scanner.contains(scrubbed)).toBe(false);
      expect(scrubbed).toMatch(/^GET .* 404$/);
    }
  });

  it('leaves text without secrets as it is', () => {
    const line =
      '{"level":30,"time":1764000000000,"req":{"id":"6f1c2e8a-1f7e-4f4e-9a55-2b1c3d4e5f60","method":"GET","url":"/api/v1/ages?source=x"},"msg":"GET /api/v1/ages 200 3ms"}';
    expect(scanner.contains(line)).toBe(false);
    expect(scanner.scrub(line)).toBe(line);
    // The display prefix of an issued key is not the key.
    expect(scanner.contains('sk_live_AbCd…')).toBe(false);
  });

  it('finds a secret of the shortest accepted length (16) in every encoding, at the edge of a token', () => {
    const short = 'a1b2c3d4e5f6g7h8';
    const shortScanner = new SecretScanner([short], /sk_live_[\w-]{20,}/, 28);
    for (const text of [
      short,
      percentAll(short),
      Buffer.from(short).toString('base64'),
      Buffer.from(short).toString('base64url').replace(/=+$/, ''),
      `key${Buffer.from(`x${short}`).toString('base64')}`,
    ]) {
      expect(shortScanner.contains(`GET ${text} 404`)).toBe(true);
      expect(shortScanner.scrub(`GET ${text} 404`)).toBe(`GET ${REDACTED} 404`);
    }
    // One character short of the secret cannot hold it, in any encoding.
    expect(shortScanner.contains(short.slice(1))).toBe(false);
  });

  it('redacts a secret made with characters no token is made of, as written', () => {
    // A password in SUBTENSOR_URL keeps `!`, `$` and `*` unencoded; a MASTER_KEY may hold any.
    const secret = 'pa$$w0rd!horse*battery';
    const punctuated = new SecretScanner([secret], /sk_live_[\w-]{20,}/, 28);
    const line = `{"msg":"disconnected from wss://gateway:${secret}@node.example/: 1006"}`;
    expect(punctuated.contains(line)).toBe(true);
    expect(punctuated.scrub(line)).not.toContain(secret);
    expect(punctuated.contains(punctuated.scrub(line))).toBe(false);
  });

  it.each(['pass"word\\with-quotes', '"abcdefghijk', '\\abcdefghijk', 'abcdefghijk"'])(
    'redacts a secret holding a quote or a backslash (%s) as a JSON line writes it, escaped',
    (secret) => {
      const quoted = new SecretScanner([secret], /sk_live_[\w-]{20,}/, 28);
      const line = JSON.stringify({
        msg: `disconnected from wss://gateway:${secret}@node.example/`,
      });
      expect(line).not.toContain(JSON.stringify(secret));
      expect(quoted.contains(line)).toBe(true);
      const scrubbed = quoted.scrub(line);
      // Still a JSON line, without the secret in either form.
      expect(JSON.parse(scrubbed)).toEqual({ msg: expect.stringContaining(REDACTED) });
      expect(scrubbed).not.toContain(JSON.stringify(secret).slice(1, -1));
      expect((JSON.parse(scrubbed) as { msg: string }).msg).not.toContain(secret);
    },
  );

  // encodeURIComponent leaves `.` and `~` as they are: the encoded secret is one token still.
  it('finds a secret holding `.` or `~`, percent-encoded where a URL needs it', () => {
    const secret = 'release.v2~p@ss-0123456789';
    const dotted = new SecretScanner([secret], /sk_live_[\w-]{20,}/, 28);
    const line = `GET /api/v1/tasks?q=${encodeURIComponent(secret)} 400`;
    expect(line).not.toContain(secret);
    expect(dotted.contains(line)).toBe(true);
    expect(dotted.scrub(line)).toBe(`GET /api/v1/tasks?${REDACTED} 400`);
  });

  // `%ff` is no UTF-8: decodeURIComponent throws on the whole run, which is decoded byte by byte.
  it('finds a percent-encoded secret glued to an escape that is not UTF-8', () => {
    for (const secret of [MASTER, ISSUED]) {
      const line = `GET /api/v1/tasks/${percentAll(secret)}%ff 404`;
      expect(scanner.contains(line)).toBe(true);
      expect(scanner.scrub(line)).toBe(`GET ${REDACTED} 404`);
    }
  });

  // Each such run cost a URIError thrown and caught: 250,000 of them in a 1 MB body were
  // seconds of CPU per request, before authentication (an audit's finding).
  it('reads runs of escapes that are not UTF-8 without decodeURIComponent throwing for each', () => {
    const decode = jest.spyOn(globalThis, 'decodeURIComponent');
    try {
      const body = JSON.stringify({ k: '%ffA'.repeat(1_000) });
      expect(scanner.contains(body)).toBe(false);
      expect(scanner.contains(`${body}${percentAll(MASTER)}%ff`)).toBe(true);
      const thrown = decode.mock.results.filter((result) => result.type === 'throw');
      expect(thrown.length).toBe(0);
    } finally {
      decode.mockRestore();
    }
  });

  it('decodes a run of escapes as UTF-8 when it is, byte for byte when it is not', () => {
    const secret = 'clé-maître-0123456789';
    const accented = new SecretScanner([secret], /sk_live_[\w-]{20,}/, 28);
    expect(accented.contains(encodeURIComponent(secret))).toBe(true);
    // %e9 alone is no UTF-8: read as latin1, it is the é a latin1 client meant.
    const latin1 = [...Buffer.from(secret, 'latin1')]
      .map((byte) => `%${byte.toString(16).padStart(2, '0')}`)
      .join('');
    expect(accented.contains(latin1)).toBe(true);
  });

  it('finds the shortest secret (8 characters) base64-encoded on its own', () => {
    const eight = new SecretScanner(['pw345678'], /sk_live_[\w-]{20,}/, 28);
    const encoded = Buffer.from('pw345678').toString('base64');
    expect(eight.contains(`auth ${encoded} refused`)).toBe(true);
    expect(eight.scrub(`auth ${encoded} refused`)).toBe(`auth ${REDACTED} refused`);
  });

  describe('the password of any URL, known or not', () => {
    const none = new SecretScanner([], /sk_live_[\w-]{20,}/, 28);

    it('redacts it however short, in the user info or the query, and leaves the rest', () => {
      expect(
        none.scrub('cannot use postgres://postgres:postgres@db:5432/validator: "postgres"'),
      ).toBe('cannot use postgres://postgres:[redacted]@db:5432/validator: "postgres"');
      expect(none.scrub('redis://:pw@cache:6379/0 and //u:p%40ss@h')).toBe(
        'redis://:[redacted]@cache:6379/0 and //u:[redacted]@h',
      );
      expect(none.scrub('postgres://u@db/x?sslmode=require&PASSWORD=pw&sslpassword=k')).toBe(
        'postgres://u@db/x?sslmode=require&PASSWORD=[redacted]&sslpassword=[redacted]',
      );
    });

    it('takes an `@` left unencoded for part of it, up to the host, as URL parsers do', () => {
      expect(none.scrub('postgres://u:p@ss@db/x mail a@b')).toBe(
        'postgres://u:[redacted]@db/x mail a@b',
      );
    });

    it('leaves URLs without one: a user alone, a port, an `@` in the path', () => {
      for (const text of [
        'postgres://gateway@db:5432/x',
        'http://127.0.0.1:3000/api/v1/x@y',
        'wss://node.example:443/ws?network=finney',
        'see https://github.com/a/b: a@b.example',
        // Hidden already, as a failed start names DATABASE_URL (withoutPassword).
        'DATABASE_URL=postgres://gateway:***@db:5432/gateway',
        'redis://u:@cache',
      ])
        expect(none.scrub(text)).toBe(text);
    });

    it('keeps a JSON line JSON: an escaped quote is part of it, a quote ends it', () => {
      const line = JSON.stringify({ msg: 'at redis://:p"w@cache', next: 'u:v@w', url: '//a:b' });
      const scrubbed = none.scrub(line);
      expect(JSON.parse(scrubbed)).toEqual({
        msg: 'at redis://:[redacted]@cache',
        next: 'u:v@w',
        url: '//a:b',
      });
    });

    it('is not what requests are refused for', () => {
      expect(none.contains('{"repo":"https://u:pw@example.com/r?password=x"}')).toBe(false);
    });

    it('costs linear time on text made to backtrack', () => {
      const started = performance.now();
      // Quadratic, the last two took minutes.
      none.scrub(`${'//a:'.repeat(50_000)}${'x'.repeat(200_000)} ${'?pass'.repeat(50_000)}`);
      none.scrub(`?${'pass'.repeat(100_000)}`);
      none.scrub(`?${'pass'.repeat(100_000)}=`);
      expect(performance.now() - started).toBeLessThan(1000);
    });
  });
});
