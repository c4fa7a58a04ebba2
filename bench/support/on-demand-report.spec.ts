import { onDemandVerdict } from './on-demand-report';

// The target: p99 ≤ the baseline's p50 + 50 ms (MARGIN_MS), here 188 ms.
describe(onDemandVerdict.name, () => {
  it('is MET by the p99 alone, whatever the ideal quorum did', () => {
    expect(onDemandVerdict(180, 100, 188)).toBe('MET');
    expect(onDemandVerdict(188, 303, 188)).toBe('MET');
  });

  it('is MISSED when the ideal quorum met the target and the gateway did not', () => {
    expect(onDemandVerdict(240, 150, 188)).toBe('MISSED');
  });

  it('is UNDECIDED when even the ideal quorum missed it and the gateway stayed within the margin of it', () => {
    expect(onDemandVerdict(340, 303, 188)).toBe('UNDECIDED');
    expect(onDemandVerdict(353, 303, 188)).toBe('UNDECIDED');
  });

  it('is MISSED when the gateway added more than the margin to a slow ideal quorum (as on 2026-12-07: 540 ms, ideal 303 ms)', () => {
    expect(onDemandVerdict(540, 303, 188)).toBe('MISSED');
    expect(onDemandVerdict(354, 303, 188)).toBe('MISSED');
  });
});
