import { seedSetting } from './measure';

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
