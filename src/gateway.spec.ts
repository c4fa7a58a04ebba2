import { StartupError } from './common/lifecycle/startup-failure';
import { secretScannerFor } from './common/security/secrets';
import { ConfigError } from './config/load-config';
import { listenUrl, startupFailureText } from './gateway';

const MASTER_KEY = 'sk_master_gateway-spec-0123456789';
const NODE_TOKEN = 'node-token-4f9c2a7e1b';

describe('startupFailureText', () => {
  const scanner = secretScannerFor({
    masterKey: MASTER_KEY,
    network: { subtensor: { url: `wss://gateway:${NODE_TOKEN}@node.example:443` } },
  });

  it('prints a failure it does not know with its stack, with the secrets of the configuration replaced', () => {
    const error = new Error(
      `cannot read wss://gateway:${NODE_TOKEN}@node.example with ${MASTER_KEY}`,
    );
    const text = startupFailureText(error, scanner);
    expect(text.split('\n')[0]).toBe(
      'Startup failed: Error: cannot read wss://gateway:[redacted]@node.example with [redacted]',
    );
    expect(text).toContain(' at ');
    expect(text).not.toContain(NODE_TOKEN);
    expect(text).not.toContain(MASTER_KEY);
  });

  it('replaces an issued key, which no configuration names', () => {
    const key = `sk_live_${'A1b2C3d4'.repeat(5)}`;
    expect(startupFailureText(new Error(`refused ${key}`), scanner)).not.toContain(key);
  });

  it('prints a known failure as its one line', () => {
    expect(
      startupFailureText(new StartupError('Startup failed: cannot listen on PORT=80'), scanner),
    ).toBe('Startup failed: cannot listen on PORT=80');
    expect(startupFailureText(new ConfigError(['PORT must be a number']), scanner)).toBe(
      'Invalid configuration:\n  - PORT must be a number',
    );
  });

  it('replaces issued keys before the configuration is read, when no other secret is known yet', () => {
    const key = `sk_live_${'A1b2C3d4'.repeat(5)}`;
    expect(startupFailureText(`boom ${key}`, undefined)).toBe('Startup failed: boom [redacted]');
  });
});

describe('listenUrl', () => {
  it('says localhost for every interface, HOST itself for one', () => {
    expect(listenUrl('0.0.0.0', 3000)).toBe('http://localhost:3000');
    expect(listenUrl('::', 3000)).toBe('http://localhost:3000');
    expect(listenUrl('127.0.0.1', 3821)).toBe('http://127.0.0.1:3821');
    expect(listenUrl('10.0.0.5', 80)).toBe('http://10.0.0.5:80');
    expect(listenUrl('::1', 3000)).toBe('http://[::1]:3000');
    expect(listenUrl('gateway.internal', 3000)).toBe('http://gateway.internal:3000');
  });
});
