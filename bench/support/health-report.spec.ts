import { Findings, pairedRatio, reportLines, verdict } from './health-report';
import { roundOrder, Target, TARGETS } from './health-targets';
import { driftWarnings, outranWarnings } from './health-warnings';
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
        'its work per request cannot change, so the machine slowed; run again',
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

describe('driftWarnings of rises', () => {
  it("flags a steady rise beyond bare node's (as on 2026-12-07: the service 2,532 → 4,380, 73 % up)", () => {
    const warnings = driftWarnings(rounds({ service: [2_532, 3_753, 4_380] }));
    expect(warnings).toEqual([
      "warning:  service req/s rose 73% from round 1 to 3, bare node's held steady: " +
        'its warm-up may be too short, or only its first rounds were disturbed; run again',
    ]);
  });

  it("reads a rise as far as bare node's as the machine freeing up", () => {
    const warnings = driftWarnings(
      rounds({ 'bare node': [20_000, 25_000, 30_000], service: [4_000, 5_000, 6_000] }),
    );
    expect(warnings).toEqual([
      'warning:  bare node req/s rose 50% from round 1 to 3: ' +
        'its work per request cannot change, so the machine freed up; run again',
      "warning:  service req/s rose 50% from round 1 to 3, as bare node's did (50%): " +
        'the machine freed up; run again',
    ]);
  });
});

// The rounds of a methods audit's run (2026-12-07), where ratios of medians and ratios taken
// round by round disagreed.
const AUDITED: Partial<Record<Target, number[]>> = {
  'bare node': [10_212, 15_741, 10_757],
  'stock Nest': [2_482, 1_899, 3_381],
  'bare Nest': [5_563, 8_243, 6_174],
  'least path': [4_513, 4_619, 6_366],
  'lean path': [3_993, 5_998, 6_297],
  'lean in guards': [4_918, 6_197, 4_541],
  service: [2_532, 3_753, 4_380],
};

describe(pairedRatio.name, () => {
  it('takes each ratio within one round, not across medians of different rounds', () => {
    const lean = pairedRatio(AUDITED['lean path']!, AUDITED['bare Nest']!);
    expect(lean.median).toBeCloseTo(0.728, 3); // the medians' ratio was 0.971
    expect(lean.min).toBeCloseTo(0.718, 3);
    expect(lean.max).toBeCloseTo(1.02, 3);
    expect(pairedRatio(AUDITED.service!, AUDITED['bare Nest']!).median).toBeCloseTo(0.455, 3);
  });

  it('refuses rounds of unequal counts', () => {
    expect(() => pairedRatio([1, 2], [1])).toThrow('unequal rounds');
  });
});

describe(verdict.name, () => {
  it('is MET when every round reaches the share, MISSED when none does, else UNDECIDED', () => {
    expect(verdict({ median: 0.9, min: 0.8, max: 1 }, 0.8)).toBe('MET');
    expect(verdict({ median: 0.5, min: 0.4, max: 0.79 }, 0.8)).toBe('MISSED');
    expect(verdict({ median: 0.728, min: 0.718, max: 1.02 }, 0.8)).toBe('UNDECIDED');
  });
});

describe(roundOrder.name, () => {
  it('runs every target once a round, each round starting one place later', () => {
    const orders = [1, 2, 3, 4, 5, 6].map(roundOrder);
    for (const order of orders) expect([...order].sort()).toEqual([...TARGETS].sort());
    expect(new Set(orders.map((order) => order[0])).size).toBe(6);
    expect(new Set(orders.map((order) => order.at(-1))).size).toBeGreaterThan(4);
  });

  it('keeps bare Nest and the service side by side, swapping which runs first', () => {
    for (const index of [1, 2, 3, 4, 5, 6, 7]) {
      const order = roundOrder(index);
      const nest = order.indexOf('bare Nest');
      const service = order.indexOf('service');
      expect(Math.abs(nest - service)).toBe(1);
      expect(service > nest).toBe(index % 2 === 1);
    }
  });
});

describe(outranWarnings.name, () => {
  it("names each round a path outran bare Nest in, though the medians' order held", () => {
    expect(outranWarnings(rounds(AUDITED))).toEqual([
      "warning:  the least path outran bare Nest in round 3 (6,366 vs 6,174 req/s): that round's floor was disturbed; run again",
      "warning:  the lean path outran bare Nest in round 3 (6,297 vs 6,174 req/s): that round's floor was disturbed; run again",
    ]);
  });
});

describe(reportLines.name, () => {
  const findings = (clientShare: number): Findings => ({
    database: 'test',
    redis: undefined,
    bodyBytes: 300,
    rss: { started: 100, idle: 110, afterLoad: 120, peak: 130 },
    idleSeconds: 60,
    logLines: 10,
    cpu: Object.fromEntries(TARGETS.map((t) => [t, [0.5, 0.5, 0.5]])) as Record<Target, number[]>,
    clientCpu: Object.fromEntries(
      TARGETS.map((t) => [t, [clientShare, clientShare, clientShare]]),
    ) as Record<Target, number[]>,
    nodeFlags: [],
    responses: 10,
    profiles: [],
  });
  const options = { seconds: 5, warmupSeconds: 2, connections: 10, rounds: 3 };

  it('judges the target on the ratios of each round, and says so when they fall on both sides', () => {
    const lines = reportLines(options, rounds(AUDITED), findings(0.5));
    expect(lines).toContain(
      'service ≥ 80 % of bare Nest (same adapter, round by round): MISSED (45.5 %; rounds 45.5–70.9 %)',
    );
    expect(lines.find((line) => line.startsWith('lean path/bare Nest'))).toContain(
      "req/s 0.728 (rounds 0.718–1.020) (the target's behaviours with the least work we found: on both sides of 80 %)",
    );
    expect(lines.some((line) => line.includes('load generator'))).toBe(false);
  });

  it('warns when the load generator used most of a core', () => {
    const lines = reportLines(options, rounds(AUDITED), findings(0.85));
    expect(lines.find((line) => line.includes('load generator used'))).toMatch(
      /used 85% of a core/,
    );
  });
});
