import { deliveryScore, withinSizeTolerance } from './delivery-score';

describe(deliveryScore.name, () => {
  it('counts a delivery within a tenth of the claim as complete, under and over alike', () => {
    expect(deliveryScore(10, 10, 1000, 900)).toBe(1);
    // As a ratio, 10 % over came out as 0.10000000000000009 off and scored 0.909.
    expect(deliveryScore(10, 10, 1000, 1100)).toBe(1);
    expect(deliveryScore(10, 10, 1000, 899)).toBeCloseTo(0.899);
  });

  // The bucket of the hour in progress grows after the index is sent; the subnet's validator
  // never fails a bucket for holding more (a fidelity audit).
  it('costs nothing for a delivery larger than claimed', () => {
    expect(deliveryScore(10, 10, 1000, 1101)).toBe(1);
    expect(deliveryScore(10, 10, 1000, 2000)).toBe(1);
  });

  it('scales by the share of what was sent that belongs to the bucket', () => {
    expect(deliveryScore(10, 5, 1000, 1000)).toBe(0.5);
  });

  it('scores an empty delivery 0 against a claim, and 1 against an empty claim', () => {
    expect(deliveryScore(0, 0, 1000, 0)).toBe(0);
    expect(deliveryScore(0, 0, 0, 0)).toBe(1);
    expect(deliveryScore(1, 1, 0, 500)).toBe(1);
  });
});

describe(withinSizeTolerance.name, () => {
  it('holds exactly at a tenth either way, for claims of any size', () => {
    for (const claimed of [10, 1000, 12_345_670, 2_621_440]) {
      expect(withinSizeTolerance(claimed, claimed + claimed / 10)).toBe(true);
      expect(withinSizeTolerance(claimed, claimed - claimed / 10)).toBe(true);
      expect(withinSizeTolerance(claimed, claimed + claimed / 10 + 1)).toBe(false);
      expect(withinSizeTolerance(claimed, claimed - claimed / 10 - 1)).toBe(false);
    }
  });
});
