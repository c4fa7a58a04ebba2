import { HotkeyCheck } from '../network-status';
import { isValidator } from '../../common/validator-standing';
import { MinerEntity } from '../miner.entity';

/** The hotkey's standing in the registered neurons; null when no metagraph is loaded yet. */
export function checkHotkey(
  miners: readonly MinerEntity[],
  hotkey: string,
  netuid: number,
  minStake: number,
): HotkeyCheck | null {
  const registered = miners.filter((miner) => miner.state !== 'deregistered');
  if (registered.length === 0) return null;
  const own = registered.find((miner) => miner.hotkey === hotkey);
  const neuron = own && {
    uid: own.uid,
    validatorPermit: own.validatorPermit,
    stake: own.stake,
  };
  if (own && isValidator(own, minStake)) return { standing: 'validator', neuron };
  const refused = 'so miners refuse every call (403) and its call budgets are spent for nothing';
  const subject = `this gateway's hotkey ${hotkey}`;
  if (!own)
    return {
      standing: 'not_registered',
      problem: `${subject} is not registered on netuid ${netuid}, ${refused}`,
    };
  if (!own.validatorPermit)
    return {
      standing: 'no_permit',
      neuron,
      problem: `${subject} (uid ${own.uid}) has no validator permit on netuid ${netuid}, ${refused}`,
    };
  return {
    standing: 'stake_too_low',
    neuron,
    problem:
      `${subject} (uid ${own.uid}) has ${own.stake} α of stake weight on netuid ${netuid}, under ` +
      `the ${minStake} a validator needs (VALIDATOR_MIN_STAKE), ${refused}`,
  };
}
