import { blockAt, generateIdentities } from './metagraph';

describe('generateIdentities', () => {
  it('is the same for the same seed and differs for another', () => {
    expect(generateIdentities(4, 6, 2)).toEqual(generateIdentities(4, 6, 2));
    expect(generateIdentities(5, 6, 2)[0].hotkey).not.toBe(generateIdentities(4, 6, 2)[0].hotkey);
  });

  it('keeps a miner key when miners are added', () => {
    expect(generateIdentities(4, 8, 2)[3].hotkey).toBe(generateIdentities(4, 4, 2)[3].hotkey);
  });

  it('pairs miners 4k and 4k+1 on one coldkey and gives validators the permit', () => {
    const identities = generateIdentities(4, 8, 2);
    const coldkeys = identities.map((identity) => identity.coldkey);
    expect(coldkeys[4]).toBe(coldkeys[5]);
    expect(new Set(coldkeys).size).toBe(6 + 2);
    expect(identities.slice(8).every((identity) => identity.validatorPermit)).toBe(true);
    const incentives = identities.slice(0, 8).map((identity) => identity.incentive);
    expect(incentives.reduce((sum, value) => sum + value, 0)).toBeCloseTo(1, 4);
    expect(new Set(incentives).size).toBe(8);
  });
});

describe('blockAt', () => {
  it('advances one block every 12 seconds', () => {
    const date = new Date('2025-01-01T00:00:00Z');
    expect(blockAt(new Date(date.getTime() + 120_000)) - blockAt(date)).toBe(10);
  });
});
