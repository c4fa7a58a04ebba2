import { join } from 'node:path';
import { runGateway } from '../gateway';
import { startDevnet } from './devnet';

/**
 * The development entry point (`npm start`): the gateway as main.ts runs it, plus, without a
 * metagraph source (SUBTENSOR_URL, METAGRAPH_FILE) in development or when DEVNET_MINERS asks
 * for it, a simulated subnet on loopback so that the first query returns data. Its metagraph
 * lists the gateway's hotkey as a validator with stake, so its miners take the gateway's signed
 * calls; health says `network: devnet`. DEVNET_STORED_ONLY=true makes every miner answer 404 to
 * OnDemandRequest, as today's subnet 13 miners do. Not part of the production build
 * (tsconfig.dev.json).
 */
runGateway(async (config, validatorHotkey) => {
  const directory = join(config.dataDir, 'devnet');
  const metagraphFile = join(directory, 'metagraph.json');
  const devnet = await startDevnet({
    miners: config.network.devnetMiners,
    metagraphFile,
    repoNamesFile: config.repos.hfResultsPath
      ? undefined
      : join(directory, 'hf_validation.parquet'),
    validatorHotkeys: [validatorHotkey],
    storedOnly: config.network.devnetStoredOnly,
    // The miners keep the gateway's time (CLOCK_SIMULATION), or their nonce checks and call
    // windows would disagree with its calls.
    simulation: config.clockSimulation,
  });
  const storedOnly = devnet.storedOnly ? ', stored data only (DEVNET_STORED_ONLY)' : '';
  return {
    metagraphFile,
    repoNamesFile: devnet.repoNamesFile ?? undefined,
    description: `SIMULATED devnet of ${devnet.miners.length} miners${storedOnly} (set SUBTENSOR_URL for the real subnet)`,
    stop: () => devnet.stop(),
  };
});
