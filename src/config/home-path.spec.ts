import os from 'node:os';
import { join } from 'node:path';
import { getMetadataStorage } from 'class-validator';
import { EnvironmentVariables } from './environment-variables';
import { PATH_VARIABLES } from './home-path';
import { loadConfig } from './load-config';
import { problemsOf } from '../../test/support/config-problems';

const HOME = '/home/operator';

describe('Path settings starting with ~', () => {
  beforeEach(() => jest.spyOn(os, 'homedir').mockReturnValue(HOME));
  afterEach(() => jest.restoreAllMocks());

  it("gives every path setting's ~/ as the home directory", () => {
    const config = loadConfig({
      DATA_DIR: '~/gateway-data',
      BT_WALLET_PATH: '~/wallets',
      METAGRAPH_FILE: '~/devnet/metagraph.json',
      HF_RESULTS_PATH: '~/hf_validation.parquet',
      DEFAULT_DESIRABILITIES_FILE: '~/desirabilities.json',
    });

    expect(config.dataDir).toBe(join(HOME, 'gateway-data'));
    expect(config.validatorKey.wallet.path).toBe(join(HOME, 'wallets'));
    expect(config.network.metagraphFile).toBe(join(HOME, 'devnet', 'metagraph.json'));
    expect(config.repos.hfResultsPath).toBe(join(HOME, 'hf_validation.parquet'));
    expect(config.defaultDesirabilitiesFile).toBe(join(HOME, 'desirabilities.json'));
  });

  it('expands the default BT_WALLET_PATH and a bare ~, and leaves other paths as given', () => {
    expect(loadConfig({}).validatorKey.wallet.path).toBe(join(HOME, '.bittensor', 'wallets'));
    expect(loadConfig({ DATA_DIR: '~' }).dataDir).toBe(HOME);
    expect(loadConfig({ DATA_DIR: './~/x' }).dataDir).toBe('./~/x');
    expect(loadConfig({ DATA_DIR: '/srv/a~b' }).dataDir).toBe('/srv/a~b');
    expect(loadConfig({}).dataDir).toBe('./.data');
  });

  it("refuses ~name/ (another user's home), naming the variable", () => {
    expect(problemsOf({ DATA_DIR: '~alice/data', METAGRAPH_FILE: '~bob' })).toEqual([
      expect.stringMatching(/^DATA_DIR: starts with ~name, another user's home/),
      expect.stringMatching(/^METAGRAPH_FILE: starts with ~name, another user's home/),
    ]);
  });

  // Node said `uv_os_homedir returned ENOENT` (a restricted-runtime audit).
  it('says why ~ cannot be expanded when the process has no home', () => {
    jest.spyOn(os, 'homedir').mockImplementation(() => {
      throw new Error('A system error occurred: uv_os_homedir returned ENOENT');
    });
    // BT_WALLET_PATH by its default, ~/.bittensor/wallets.
    expect(problemsOf({ DATA_DIR: '~/data' })).toEqual(
      ['BT_WALLET_PATH', 'DATA_DIR'].map((name): unknown =>
        expect.stringMatching(
          new RegExp(
            `^${name}: is under ~, the home directory, and the process has none: HOME is not set and uid \\d+ has no user entry .*: write the absolute path$`,
          ),
        ),
      ),
    );
  });

  it('covers every setting of the schema named as a path (…_DIR, …_PATH, …_FILE)', () => {
    const names = getMetadataStorage()
      .getTargetValidationMetadatas(EnvironmentVariables, '', true, false)
      .map((entry) => entry.propertyName);
    const paths = [...new Set(names)].filter((name) => /_(DIR|PATH|FILE)$/.test(name));
    expect([...PATH_VARIABLES].sort()).toEqual(paths.sort());
  });
});
