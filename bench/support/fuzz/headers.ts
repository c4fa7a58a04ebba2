import fc from 'fast-check';

// The headers of a fuzz case (requests.ts): the X-API-Key header (one of the run's keys, as
// sent or altered, none, two, or garbage), the content type, and odd extra headers; and the
// run's context (its keys, and the ids that hit real rows) the cases draw on.

export type KeyRole = 'master' | 'validator' | 'regular' | 'deactivated';

/** What a fuzz run knows about the app under test: its keys and ids that exist there. */
export interface FuzzContext {
  keys: Record<KeyRole, string>;
  /** Path values that hit real rows: task ids, key ids, full keys to deactivate. */
  knownIds: string[];
}

/** How the X-API-Key header is sent: absent, one of the context's keys, or garbage. */
export type KeyHeader =
  | { kind: 'none' }
  | { kind: 'role'; role: KeyRole; variant: 'as-is' | 'padded' | 'upper' | 'truncated' }
  | { kind: 'duplicate'; roles: [KeyRole, KeyRole] }
  | { kind: 'raw'; value: string };

/** Printable ASCII and Latin-1: what Node's client lets through in a header value. */
const headerString = (maxLength: number): fc.Arbitrary<string> =>
  fc.string({
    maxLength,
    unit: fc
      .oneof(
        { weight: 6, arbitrary: fc.integer({ min: 0x20, max: 0x7e }) },
        { weight: 1, arbitrary: fc.integer({ min: 0x80, max: 0xff }) },
      )
      .map((code) => String.fromCharCode(code)),
  });

export const keyHeader: fc.Arbitrary<KeyHeader> = fc.oneof(
  {
    weight: 16,
    arbitrary: fc.record({
      kind: fc.constant('role' as const),
      role: fc.constantFrom<KeyRole>(
        'master',
        'master',
        'master',
        'validator',
        'validator',
        'regular',
      ),
      variant: fc.oneof(
        { weight: 12, arbitrary: fc.constant('as-is' as const) },
        fc.constantFrom('padded', 'upper', 'truncated'),
      ),
    }),
  },
  { weight: 1, arbitrary: fc.constant({ kind: 'none' as const }) },
  {
    weight: 1,
    arbitrary: fc.constant({
      kind: 'role' as const,
      role: 'deactivated' as const,
      variant: 'as-is' as const,
    }),
  },
  {
    weight: 1,
    arbitrary: fc.record({
      kind: fc.constant('duplicate' as const),
      roles: fc.tuple(
        fc.constantFrom<KeyRole>('master', 'regular'),
        fc.constantFrom<KeyRole>('master', 'regular'),
      ),
    }),
  },
  {
    weight: 2,
    arbitrary: fc.record({
      kind: fc.constant('raw' as const),
      value: fc.oneof(
        headerString(80),
        fc.constantFrom('', ' ', 'sk_live_', 'sk_master_', 'null', 'Bearer x'),
        // Long but under Node's 16 KiB header limit (the app answers), and over it (Node does).
        fc.constantFrom(8_000, 8_000, 8_000, 20_000).map((n) => `sk_live_${'A'.repeat(n)}`),
      ),
    }),
  },
);

export const contentType = fc.oneof(
  { weight: 12, arbitrary: fc.constant('application/json') },
  {
    weight: 1,
    arbitrary: fc.constantFrom(
      'application/json; charset=utf-8',
      'application/json; charset=latin1',
      'application/json; charset=utf-16',
      'APPLICATION/JSON',
      'application/vnd.api+json',
      'text/plain',
      'application/x-www-form-urlencoded',
      'multipart/form-data; boundary=xyz',
      'application/octet-stream',
      'a/b/c;;;',
      '',
    ),
  },
);

export const extraHeaders: fc.Arbitrary<Record<string, string>> = fc.oneof(
  { weight: 3, arbitrary: fc.constant({}) },
  { weight: 2, arbitrary: oddHeaders() },
);

function oddHeaders(): fc.Arbitrary<Record<string, string>> {
  return fc.record(
    {
      accept: fc.constantFrom(
        '*/*',
        'application/json',
        'text/html',
        'application/xml',
        'x/y;q=z',
        '',
      ),
      'x-request-id': fc.oneof(
        headerString(60),
        fc.constantFrom('a'.repeat(5_000), '../../etc/passwd', '${jndi:ldap://x}', '0', ''),
      ),
      'content-encoding': fc.constantFrom('gzip', 'identity', 'x-unknown'),
      'x-forwarded-for': headerString(30),
    },
    { requiredKeys: [] },
  );
}

/** The X-API-Key header value(s) a case sends. */
export function keyHeaderValue(
  key: KeyHeader,
  context: FuzzContext,
): string | string[] | undefined {
  switch (key.kind) {
    case 'none':
      return undefined;
    case 'raw':
      return key.value;
    case 'duplicate':
      return key.roles.map((role) => context.keys[role]);
    case 'role': {
      const value = context.keys[key.role];
      if (key.variant === 'padded') return ` ${value}\t`;
      if (key.variant === 'upper') return value.toUpperCase();
      return key.variant === 'truncated' ? value.slice(0, -1) : value;
    }
  }
}
