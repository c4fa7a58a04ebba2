import { ClockSimulation, parseClockSimulation } from '../common/clock/clock-simulation';
import { EnvironmentVariables } from './environment-variables';
import { loopbackOnly } from './miner-call-limits';
import { AllowedNetworks } from './miner-network-settings';
import { parsed } from './variable-problems';

/**
 * CLOCK_SIMULATION moves the process's time, and with it every call budget, cooldown and
 * freshness the gateway keeps: a test tool that production refuses to start with, and so does
 * any mode that may call miners beyond loopback (budgets counted in simulated time would let
 * real miners be called as fast as the clock runs; only a devnet on this machine keeps its
 * time). `allowedNetworks` undefined: refused by its own rule already.
 */
export function clockSimulationOf(
  problems: string[],
  text: string,
  vars: EnvironmentVariables,
  allowedNetworks: AllowedNetworks | undefined,
): ClockSimulation | undefined {
  const refused =
    vars.NODE_ENV === 'production'
      ? 'NODE_ENV=production'
      : allowedNetworks && !loopbackOnly(allowedNetworks)
        ? `MINER_ALLOWED_NETWORKS reaches beyond loopback (${vars.MINER_ALLOWED_NETWORKS}), ` +
          'where real miners would be called faster than they allow'
        : undefined;
  if (refused) {
    problems.push(
      `CLOCK_SIMULATION: for tests only (it moves the time call budgets are counted in); refused when ${refused}`,
    );
    return undefined;
  }
  return parsed(problems, 'CLOCK_SIMULATION', () => parseClockSimulation(text));
}
