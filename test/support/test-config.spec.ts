import { resolve } from 'node:path';
import { PassThrough } from 'node:stream';
import { loadConfig } from '../../src/config/load-config';
import { subtensorAt, testConfig } from './test-config';

describe(testConfig.name, () => {
  it('is the config loaded with NODE_ENV=test alone, but for DATA_DIR', () => {
    const { dataDir, ...rest } = testConfig();
    const { dataDir: loaded, ...defaults } = loadConfig({ NODE_ENV: 'test' });
    expect(rest).toEqual(defaults);
    expect(loaded).toBe('./.data');
    // Not the developer's own data folder: a spec that forgets its own is not let loose there.
    expect(resolve(dataDir).startsWith(resolve(__dirname, '..', '..'))).toBe(false);
    expect(dataDir).toContain('testConfig-dataDir-not-set');
  });

  it('merges an object field by field, keeping the defaults of the fields not given', () => {
    const config = testConfig({ network: { quorum: 2, indexSync: { spotChecks: 0 } } });
    const defaults = testConfig();
    expect(config.network).toEqual({
      ...defaults.network,
      quorum: 2,
      indexSync: { ...defaults.network.indexSync, spotChecks: 0 },
    });
    expect(config.tasks).toEqual(defaults.tasks);
  });

  it('replaces arrays, class instances and optional parts whole', () => {
    const stream = new PassThrough();
    const config = testConfig({
      corsOrigins: ['https://a.example'],
      network: { allowedNetworks: { cidrs: ['10.0.0.0/8'] }, subtensor: subtensorAt('ws://n:1') },
      logDestination: stream,
    });
    expect(config.corsOrigins).toEqual(['https://a.example']);
    expect(config.network.allowedNetworks).toEqual({ publicUnicast: false, cidrs: ['10.0.0.0/8'] });
    expect(config.network.subtensor).toEqual({
      url: 'ws://n:1',
      syncIntervalMs: 300_000,
      timeoutMs: 30_000,
    });
    expect(config.logDestination).toBe(stream);
  });

  it('gives each call its own copy: a config changed by one test is not the next one', () => {
    const first = testConfig();
    first.network.indexSync.concurrency = 99;
    first.corsOrigins.push('https://changed.example');
    expect(testConfig().network.indexSync.concurrency).toBe(4);
    expect(testConfig().corsOrigins).toEqual([]);
  });

  it('refuses undefined over a default, which the type check lets through', () => {
    expect(() => testConfig({ tasks: { tickMs: undefined } })).toThrow(
      'testConfig: tickMs is given as undefined over its default 60000',
    );
    // A setting unset by default may be said to be unset.
    expect(testConfig({ gravity: { repoUrl: undefined } }).gravity.repoUrl).toBeUndefined();
  });

  it('does not compile a misspelled or wrong-typed setting', () => {
    // Checked by `npm run check` (tsc): each line below is an error it expects.
    // @ts-expect-error a misspelled field
    expect(() => testConfig({ network: { quorumm: 2 } })).not.toThrow();
    // @ts-expect-error a wrong type
    expect(() => testConfig({ tasks: { tickMs: '60000' } })).not.toThrow();
    // @ts-expect-error an optional part given in part
    expect(() => testConfig({ network: { subtensor: { url: 'ws://n:1' } } })).not.toThrow();
  });
});
