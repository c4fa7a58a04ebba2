import { DEFAULT_VALIDATOR_MIN_STAKE, isValidator } from './validator-standing';

describe(isValidator.name, () => {
  const min = DEFAULT_VALIDATOR_MIN_STAKE;

  it('needs a validator permit and at least the minimum stake, as subnet 13 does', () => {
    expect(isValidator({ validatorPermit: true, stake: 10_000 }, min)).toBe(true);
    // uid 496 of the recorded netuid 1: a permit, 5,770 TAO: a miner to subnet 13.
    expect(isValidator({ validatorPermit: true, stake: 5_770.068546252 }, min)).toBe(false);
    expect(isValidator({ validatorPermit: false, stake: 500_000 }, min)).toBe(false);
  });

  it('lets the permit decide when the stake is unknown', () => {
    expect(isValidator({ validatorPermit: true, stake: null }, min)).toBe(true);
    expect(isValidator({ validatorPermit: false, stake: null }, min)).toBe(false);
  });
});
