import { onDemandVerdict } from './on-demand-report';

describe(onDemandVerdict.name, () => {
  it('is MET by the p99 alone, whatever the ideal quorum did', () => {
    expect(onDemandVerdict(180, 100, 188)).toBe('MET');
    expect(onDemandVerdict(188, 303, 188)).toBe('MET');
  });

  it('is MISSED when the ideal quorum met the target and the gateway did not', () => {
    expect(onDemandVerdict(540, 150, 188)).toBe('MISSED');
  });

  it('is UNDECIDED when even the ideal quorum missed it (as on 2026-12-07: 540 ms, ideal 303 ms)', () => {
    expect(onDemandVerdict(540, 303, 188)).toBe('UNDECIDED');
  });
});
