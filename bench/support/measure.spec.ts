import {
  alternatingMedians,
  median,
  percentile,
  Round,
  seedSetting,
  summarize,
  trackUsage,
} from './measure';

describe(seedSetting.name, () => {
  it('takes the seed asked for, 0 included', () => {
    expect(seedSetting('42', 'BENCH_FUZZ_SEED')).toBe(42);
    expect(seedSetting('0', 'BENCH_FUZZ_SEED')).toBe(0);
  });

  it('draws one from the clock when none is asked for, within 31 bits', () => {
    const now = 2 ** 31 + 1234;
    expect(seedSetting(undefined, 'BENCH_FUZZ_SEED', now)).toBe(1234);
    expect(seedSetting('', 'BENCH_FUZZ_SEED', now)).toBe(1234);
  });

  it.each(['-1', '1.5', 'seed'])('refuses %p, naming the variable', (raw) => {
    expect(() => seedSetting(raw, 'BENCH_FUZZ_SEED')).toThrow(
      `BENCH_FUZZ_SEED (or its flag) must be a non-negative integer: ${raw}`,
    );
  });
});

describe(median.name, () => {
  it('takes the middle value, and the mean of the two middle ones for an even count', () => {
    expect(median([3, 1, 2])).toBe(2);
    expect(median([4, 1, 3, 2])).toBe(2.5);
    expect(() => median([])).toThrow('median of nothing');
  });
});

describe(percentile.name, () => {
  it('is the nearest rank: always one of the samples', () => {
    const samples = Array.from({ length: 300 }, (_, i) => i + 1); // 1..300
    expect(percentile(samples, 0.99)).toBe(297); // three of the 300 above it
    expect(percentile(samples, 0.5)).toBe(150);
    expect(percentile(samples, 1)).toBe(300);
    expect(percentile([7], 0.99)).toBe(7);
  });
});

describe(summarize.name, () => {
  it("takes each figure's median over rounds and sums the counts", () => {
    const round = (rps: number, p99: number, non2xx = 0): Round => ({
      rps,
      p50: 1,
      p99,
      non2xx,
      bytesPerResponse: 400,
      responses: rps * 5,
    });
    const summary = summarize([round(100, 9), round(300, 3, 1), round(200, 5)]);
    expect(summary).toEqual({
      rps: 200,
      p50: 1,
      p99: 5,
      non2xx: 1,
      bytesPerResponse: 400,
      responses: 3_000,
    });
  });
});

describe(trackUsage.name, () => {
  // From /proc/<pid>/stat, whose CPU ticks come after the command's name. A loaded machine may
  // give the busy loop little of a core: only that some was counted is asserted.
  it('reads the CPU time of a busy process, and NaN for one that is not there', () => {
    const usage = trackUsage([process.pid, 2 ** 22 + 1]);
    const until = Date.now() + 200;
    while (Date.now() < until); // busy
    const { cpu } = usage();
    expect(cpu[0]).toBeGreaterThan(0);
    expect(cpu[1]).toBeNaN();
  });
});

describe(alternatingMedians.name, () => {
  it("alternates the runs within each round, the order reversed each other round, and takes each one's median", async () => {
    const order: string[] = [];
    const times = { ours: [5, 1, 3], theirs: [20, 40, 30] };
    const medians = await alternatingMedians(
      3,
      { ours: 'ours', theirs: 'theirs' } as const,
      (name) => {
        order.push(name);
        return times[name][order.filter((ran) => ran === name).length - 1];
      },
    );
    expect(order).toEqual(['ours', 'theirs', 'theirs', 'ours', 'ours', 'theirs']);
    expect(medians).toEqual({ ours: 3, theirs: 30 });
  });
});
