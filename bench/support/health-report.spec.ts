import { driftWarnings, Target, TARGETS } from './health-report';
import { Round } from './measure';

/** Rounds at these rates for the named targets; every other target steady at 10,000 req/s. */
function rounds(rates: Partial<Record<Target, number[]>>): Record<Target, Round[]> {
  const round = (rps: number): Round => ({
    rps,
    p50: 0,
    p99: 1,
    non2xx: 0,
    bytesPerResponse: 400,
    responses: rps * 5,
  });
  return Object.fromEntries(
    TARGETS.map((target) => [target, (rates[target] ?? [10_000, 10_000, 10_000]).map(round)]),
  ) as Record<Target, Round[]>;
}

describe('driftWarnings', () => {
  it('says nothing of steady rounds, of a fall under 15 %, or of rounds that fell and rose', () => {
    expect(driftWarnings(rounds({}))).toEqual([]);
    expect(driftWarnings(rounds({ service: [6_000, 5_800, 5_200] }))).toEqual([]);
    expect(driftWarnings(rounds({ service: [6_000, 3_000, 4_000] }))).toEqual([]);
  });

  it("suspects a per-request cost, and asks for another run, when the target fell beyond bare node's fall", () => {
    const warnings = driftWarnings(
      rounds({ 'bare node': [36_000, 35_000, 34_000], service: [7_000, 6_000, 4_000] }),
    );
    expect(warnings).toEqual([
      "warning:  service req/s fell 43% from round 1 to 3, bare node's fell 6%: " +
        'a per-request cost may grow during the run, or only its rounds were disturbed; run again',
    ]);
  });

  it('names a rise of bare node as a rise (as on 2026-12-02: lean in guards 29 % down)', () => {
    const warnings = driftWarnings(
      rounds({ 'bare node': [30_744, 36_432, 35_205], 'lean in guards': [10_628, 10_455, 7_546] }),
    );
    expect(warnings).toEqual([
      "warning:  lean in guards req/s fell 29% from round 1 to 3, bare node's rose 15%: " +
        'a per-request cost may grow during the run, or only its rounds were disturbed; run again',
    ]);
  });

  it('blames the machine when bare node fell as far (as on 2026-12-02: bare node 43 %)', () => {
    const warnings = driftWarnings(
      rounds({
        'bare node': [36_658, 22_240, 20_721],
        'least path': [12_000, 9_000, 7_000],
      }),
    );
    expect(warnings).toEqual([
      'warning:  bare node req/s fell 43% from round 1 to 3: ' +
        'its work per request cannot grow, so the machine slowed; run again',
      "warning:  least path req/s fell 42% from round 1 to 3, as bare node's did (43%): " +
        'the machine slowed; run again',
    ]);
  });

  it("reads a fall within 10 points beyond bare node's as the machine's, and one past it as the target's", () => {
    const base = { 'bare node': [30_000, 28_000, 24_000] }; // 20 % down
    const service = (last: number) =>
      driftWarnings(rounds({ ...base, service: [6_000, 5_000, last] })).at(-1);
    expect(service(4_300)).toMatch(/service .* fell 28% .*as bare node's did \(20%\): the machine/);
    expect(service(4_000)).toMatch(
      /service .* fell 33% .*bare node's fell 20%: a per-request cost may grow/,
    );
  });
});
