import { secretScannerFor, urlCredentials } from './secrets';

const TOKEN = 'n0de-t0ken-0123456789abcdef';

describe('secretScannerFor', () => {
  it('finds the credentials of SUBTENSOR_URL, in its user, password and query', () => {
    for (const url of [
      `wss://gateway:${TOKEN}@node.example/`,
      `wss://${TOKEN}@node.example/`,
      `wss://node.example/ws?token=${TOKEN}`,
    ]) {
      const scanner = secretScannerFor({ network: { subtensor: { url } } });
      expect(scanner.scrub(`disconnected from ${url}`)).not.toContain(TOKEN);
      expect(scanner.scrub(`token ${TOKEN} seen`)).toBe('token [redacted] seen');
    }
  });

  it('finds a percent-encoded password as the node takes it, decoded', () => {
    const scanner = secretScannerFor({
      network: { subtensor: { url: 'wss://u:p%40ss-w0rd-0123456789@node.example/' } },
    });
    expect(scanner.contains('p@ss-w0rd-0123456789')).toBe(true);
  });

  it('leaves short user names and a URL without credentials alone', () => {
    expect(urlCredentials('wss://entrypoint-finney.opentensor.ai:443')).toEqual([]);
    const scanner = secretScannerFor({
      network: { subtensor: { url: `wss://gateway:${TOKEN}@node.example/` } },
    });
    expect(scanner.scrub('the gateway started')).toBe('the gateway started');
  });
});
