import { minerEntity } from '../../../test/support/neurons';
import { MinerEntity } from '../miner.entity';
import { checkHotkey } from './hotkey-standing';

const OWN = '5OwnHotkey';
const MIN_STAKE = 10_000;

const check = (miners: MinerEntity[]) => checkHotkey(miners, OWN, 13, MIN_STAKE);

describe(checkHotkey.name, () => {
  it('says nothing before a metagraph with registered neurons is loaded', () => {
    expect(check([])).toBeNull();
    expect(check([minerEntity(0, { hotkey: OWN, state: 'deregistered' })])).toBeNull();
  });

  it('is a validator with a permit and the minimum stake, and names its neuron', () => {
    const own = minerEntity(4, { hotkey: OWN, validatorPermit: true, stake: MIN_STAKE });
    expect(check([minerEntity(0), own])).toEqual({
      standing: 'validator',
      neuron: { uid: 4, validatorPermit: true, stake: MIN_STAKE },
    });
  });

  // The chain grants permits by stake: with the stake unknown, the permit decides.
  it('is a validator with a permit and an unknown stake', () => {
    const own = minerEntity(4, { hotkey: OWN, validatorPermit: true, stake: null });
    expect(check([own])).toMatchObject({ standing: 'validator', neuron: { stake: null } });
  });

  it('is stake_too_low with a permit under the minimum stake, naming both amounts', () => {
    const own = minerEntity(4, { hotkey: OWN, validatorPermit: true, stake: MIN_STAKE - 1 });
    const result = check([own]);
    expect(result).toMatchObject({
      standing: 'stake_too_low',
      neuron: { uid: 4, validatorPermit: true, stake: MIN_STAKE - 1 },
    });
    expect(result?.problem).toMatch(/uid 4\) has 9999 α of stake weight .* under the 10000/);
  });

  it('is no_permit without a permit, whatever its stake', () => {
    const own = minerEntity(4, { hotkey: OWN, validatorPermit: false, stake: 1_000_000 });
    expect(check([own])).toMatchObject({
      standing: 'no_permit',
      neuron: { uid: 4, validatorPermit: false },
      problem: expect.stringMatching(/uid 4\) has no validator permit on netuid 13/),
    });
  });

  // Miners know a validator by its hotkey: an own coldkey on the subnet is no standing.
  it('is not_registered when the hotkey is not among the neurons, or its uid was deregistered', () => {
    const coldkeyOnly = minerEntity(2, { coldkey: OWN, validatorPermit: true, stake: 50_000 });
    expect(check([minerEntity(0), coldkeyOnly])).toMatchObject({
      standing: 'not_registered',
      problem: expect.stringMatching(/is not registered on netuid 13/),
    });
    const gone = minerEntity(3, {
      hotkey: OWN,
      validatorPermit: true,
      stake: 50_000,
      state: 'deregistered',
    });
    expect(check([minerEntity(0), gone])).toMatchObject({ standing: 'not_registered' });
    expect(check([minerEntity(0), gone])?.neuron).toBeUndefined();
  });
});
