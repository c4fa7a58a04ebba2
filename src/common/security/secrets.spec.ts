import { connectionPasswords, logScannerFor, secretScannerFor, urlCredentials } from './secrets';

const TOKEN = 'n0de-t0ken-0123456789abcdef';

describe('secretScannerFor', () => {
  it('finds the credentials of SUBTENSOR_URL: its password, a user without one, a token in its query', () => {
    for (const url of [
      `wss://gateway:${TOKEN}@node.example/`,
      `wss://${TOKEN}@node.example/`,
      `wss://node.example/ws?token=${TOKEN}`,
      `wss://node.example/ws?network=finney&api_key=${TOKEN}`,
      `wss://node.example/ws?auth=${TOKEN}`,
      `wss://node.example/ws?password=${TOKEN}`,
    ]) {
      const scanner = secretScannerFor({ network: { subtensor: { url } } });
      expect(scanner.scrub(`disconnected from ${url}`)).not.toContain(TOKEN);
      expect(scanner.scrub(`token ${TOKEN} seen`)).toBe('token [redacted] seen');
    }
  });

  it('finds a password as short as 8 characters, and takes none shorter for a secret', () => {
    // Shorter values would match everywhere; 8 is the floor for any credential of the URL.
    const eight = secretScannerFor({
      network: { subtensor: { url: 'wss://u:pw345678@node.example/' } },
    });
    expect(eight.scrub('auth pw345678 refused')).toBe('auth [redacted] refused');
    const seven = secretScannerFor({
      network: { subtensor: { url: 'wss://u:pw34567@node.example/' } },
    });
    expect(seven.contains('auth pw34567 refused')).toBe(false);
  });

  it('finds a percent-encoded password as the node takes it, decoded', () => {
    const scanner = secretScannerFor({
      network: { subtensor: { url: 'wss://u:p%40ss-w0rd-0123456789@node.example/' } },
    });
    expect(scanner.contains('p@ss-w0rd-0123456789')).toBe(true);
  });

  it('finds the credentials as written in the URL too: a query value with `+`, an encoded password', () => {
    // URLSearchParams reads `+` as a space, and a password is decoded: the client's lines quote
    // the URL as given, which holds neither decoded form.
    for (const [url, written] of [
      ['wss://node.example/ws?apikey=Zm9vYmFy+YmF6cXV4/dGVzdA==', 'Zm9vYmFy+YmF6cXV4/dGVzdA=='],
      ['wss://u:p%40ss!w0rd-0123456789@node.example/', 'p%40ss!w0rd-0123456789'],
    ]) {
      const scanner = secretScannerFor({ network: { subtensor: { url } } });
      const scrubbed = scanner.scrub(`disconnected from ${url}: 1006`);
      expect(scrubbed).toContain('[redacted]');
      expect(scrubbed).not.toContain(written);
    }
  });

  it('finds a query credential in the form the node is given it, decoded, and one named sig', () => {
    const encoded = 'n0de%2Ft0ken%2B0123456789';
    expect(urlCredentials(`wss://node.example/ws?token=${encoded}`)).toEqual([
      encoded,
      'n0de/t0ken+0123456789',
    ]);
    expect(urlCredentials(`wss://node.example/ws?sig=${TOKEN}`)).toEqual([TOKEN]);
    // The node reads the name decoded too.
    expect(urlCredentials(`wss://node.example/ws?%74oken=${TOKEN}`)).toEqual([TOKEN]);
  });

  it('finds a key a hosted node takes in its path, and leaves route names out', () => {
    const key = '5c1d3e2a-0f4b-4c8e-9a7d-1b2c3d4e5f60';
    const url = `wss://api-bittensor-mainnet.node.example/${key}`;
    expect(urlCredentials(url)).toEqual([key]);
    const scanner = secretScannerFor({ network: { subtensor: { url } } });
    expect(scanner.scrub(`Invalid URL ${url}`)).not.toContain(key);
    for (const route of [
      '/ws',
      '/public/rpc',
      '/bittensor-finney/archive',
      '/v1/ws-endpoint-node',
      // 20 characters and more, but no digit: a route name still.
      '/bittensor-finney-archive-node',
    ])
      expect(urlCredentials(`wss://node.example${route}`)).toEqual([]);
  });

  it('takes nothing else of the URL: the user beside a password, other query values', () => {
    // The scanner also refuses requests that hold a secret: `validator` or `bittensor` in it
    // would refuse a keyword `#bittensor` and redact `validator_preferences` from the log.
    const url = `wss://validator:${TOKEN}@node.example/ws?network=bittensor`;
    expect(urlCredentials(url)).toEqual([TOKEN]);
    const scanner = secretScannerFor({ network: { subtensor: { url } } });
    expect(scanner.contains('{"keyword":"#bittensor"}')).toBe(false);
    expect(scanner.scrub('validator_preferences/5F.json pushed')).toBe(
      'validator_preferences/5F.json pushed',
    );
    expect(urlCredentials('wss://entrypoint-finney.opentensor.ai:443')).toEqual([]);
  });

  // An issued key is 43 random base64url characters: about half have a `-` or `_` in their
  // first 20, and every one of them is a key all the same.
  it('finds an issued key whatever its characters, `-` and `_` among them', () => {
    const scanner = secretScannerFor({});
    const key = `sk_live_${'Ab3-x_'.repeat(7)}Q`;
    expect(scanner.contains(`GET /api/v1/tasks/${key} 404`)).toBe(true);
    expect(scanner.scrub(`key ${key} refused`)).toBe('key [redacted] refused');
  });
});

describe('connectionPasswords', () => {
  it('takes the password, as written and decoded, and one in the query; never the user', () => {
    expect(connectionPasswords('postgres://gateway:p%40ss%2Fw0rd@db/validator')).toEqual([
      'p%40ss%2Fw0rd',
      'p@ss/w0rd',
    ]);
    expect(connectionPasswords('redis://gateway@cache:6379/0?password=r3dis-s3cret')).toEqual([
      'r3dis-s3cret',
    ]);
    expect(
      connectionPasswords('postgres://gateway@db/x?sslpassword=k3y-pass&sslkey=/k.pem'),
    ).toEqual(['k3y-pass']);
    expect(connectionPasswords('postgres://gateway@db/validator')).toEqual([]);
  });

  // Looked for by value, `postgres` would go from every line naming the database or its user;
  // in a URL it is redacted all the same (secret-scanner.spec.ts).
  it('leaves out a password that is a word shorter than 16 letters, not one with another character', () => {
    expect(connectionPasswords('postgres://postgres:postgres@db/x')).toEqual([]);
    expect(connectionPasswords('postgres://u:validatorpassword@db/x')).toEqual([
      'validatorpassword',
    ]);
    expect(connectionPasswords('postgres://u:hunter22@db/x')).toEqual(['hunter22']);
  });
});

describe('logScannerFor', () => {
  it('knows the passwords and VALIDATOR_HOTKEY_URI besides what secretScannerFor knows', () => {
    const scanner = logScannerFor({
      masterKey: 'master-key-0123456789',
      databaseUrl: 'postgres://u:hunter22@db/x',
      redisUrl: 'rediss://:r3dis-s3cret@cache:6380',
      validatorKey: { uri: '0x3f1e9c2a7b//hard/soft' },
    });
    expect(scanner.scrub('master-key-0123456789 hunter22 r3dis-s3cret 0x3f1e9c2a7b')).toBe(
      '[redacted] [redacted] [redacted] [redacted]',
    );
    // The URI's password (`///…`) is as secret as its phrase.
    expect(
      logScannerFor({ validatorKey: { uri: '0x3f1e9c2a7b//hard///k3y-passw0rd' } }).scrub(
        'unlock k3y-passw0rd',
      ),
    ).toBe('unlock [redacted]');
    // A development account is derived from a published phrase.
    expect(logScannerFor({ validatorKey: { uri: '//Gateway' } }).scrub('//Gateway')).toBe(
      '//Gateway',
    );
  });
});
