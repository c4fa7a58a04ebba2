import { EnvironmentVariables } from './environment-variables';

/**
 * One metagraph source at most; in production one is required, so that no deployment serves
 * made-up data. The simulated devnet is a development tool outside the production build: a
 * production gateway in front of it reads the metagraph file the devnet writes.
 *
 * An empty SUBTENSOR_URL is unset here, but docker-compose takes the public entrypoint only when
 * .env does not name the variable at all, and the sample .env of releases before 2026-11-30
 * held `SUBTENSOR_URL=` uncommented: after an upgrade such a deployment stopped starting, told
 * only that a source is required. The refusal says so.
 */
export function metagraphSourceProblems(
  vars: EnvironmentVariables,
  env: NodeJS.ProcessEnv,
): string[] {
  if (vars.SUBTENSOR_URL && vars.METAGRAPH_FILE)
    return ['SUBTENSOR_URL, METAGRAPH_FILE: set one metagraph source, not both'];
  if (vars.NODE_ENV !== 'production') return [];
  if (vars.DEVNET_MINERS)
    return [
      'DEVNET_MINERS: production never starts the simulated devnet; run it on its own ' +
        '(`npm run devnet -- --metagraph <file>`) and set METAGRAPH_FILE to its metagraph',
    ];
  if (!vars.SUBTENSOR_URL && !vars.METAGRAPH_FILE)
    return [
      'SUBTENSOR_URL, METAGRAPH_FILE: one is required when NODE_ENV=production ' +
        '(SUBTENSOR_URL=wss://entrypoint-finney.opentensor.ai:443 reads subnet NETUID from the chain)' +
        (env.SUBTENSOR_URL?.trim() === ''
          ? '; SUBTENSOR_URL is set but empty, which sets no source: remove the line from .env ' +
            '(docker-compose then takes the public entrypoint) or name a node'
          : ''),
    ];
  return [];
}

/**
 * Simulated miners for the development entry point (`npm start`) to start: only without a
 * metagraph source, by default only in development, never in production.
 */
export function devnetMiners(vars: EnvironmentVariables): number {
  if (vars.SUBTENSOR_URL || vars.METAGRAPH_FILE) return 0;
  return vars.DEVNET_MINERS ?? (vars.NODE_ENV === 'development' ? 8 : 0);
}
