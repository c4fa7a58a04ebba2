import { secretScannerFor, urlCredentials } from './secrets';

const TOKEN = 'n0de-t0ken-0123456789abcdef';

describe('secretScannerFor', () => {
  it('finds the credentials of SUBTENSOR_URL: its password, a user without one, a token in its query', () => {
    for (const url of [
      `wss://gateway:${TOKEN}@node.example/`,
      `wss://${TOKEN}@node.example/`,
      `wss://node.example/ws?token=${TOKEN}`,
      `wss://node.example/ws?network=finney&api_key=${TOKEN}`,
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
});
