import {
  alternatingMedians,
  integerListSetting,
  median,
  numberSetting,
  percentile,
  Round,
  seedSetting,
  settingText,
  summarize,
  trackUsage,
} from './measure';

/** Runs `read` with process.exit and stderr caught: its value, or `exit <code>` and stderr. */
function settle(read: () => unknown): { outcome: unknown; err: string } {
  const err: string[] = [];
  jest.spyOn(process.stderr, 'write').mockImplementation((text) => err.push(String(text)) > 0);
  jest.spyOn(process, 'exit').mockImplementation((code) => {
    throw new Error(`exit ${String(code)}`);
  });
  try {
    return { outcome: read(), err: '' };
  } catch (error) {
    return { outcome: (error as Error).message, err: err.join('') };
  } finally {
    jest.restoreAllMocks();
  }
}

describe(settingText.name, () => {
  it('takes the flag before the variable, and names where the text came from', () => {
    const env = { BENCH_ROWS: '7' };
    expect(settingText('rows', '5', 'BENCH_ROWS', env)).toEqual({ text: '5', source: '--rows' });
    expect(settingText('rows', undefined, 'BENCH_ROWS', env)).toEqual({
      text: '7',
      source: 'BENCH_ROWS (for --rows)',
    });
    expect(settingText('items', undefined)).toEqual({ text: undefined, source: '--items' });
  });

  // `BENCH_ROWS= npm run …` (or an empty line in a CI matrix) keeps the default; `--rows=` was
  // typed, and is refused by numberSetting rather than read as the default.
  it('reads an empty variable as unset, and an empty flag as given', () => {
    expect(settingText('rows', undefined, 'BENCH_ROWS', { BENCH_ROWS: '' }).text).toBeUndefined();
    expect(settingText('rows', '', 'BENCH_ROWS', { BENCH_ROWS: '7' }).text).toBe('');
  });
});

describe(numberSetting.name, () => {
  it('reads the number, or the fallback when not given', () => {
    expect(numberSetting({ text: '2.5', source: '--seconds' }, 5, false)).toBe(2.5);
    expect(numberSetting({ text: undefined, source: '--seconds' }, 5, false)).toBe(5);
    expect(numberSetting({ text: '0', source: '--hung' }, 1, true, true)).toBe(0);
  });

  it.each([
    ['--rows', 'abc', true, 'positive integer'],
    ['--calls', '2.5', true, 'positive integer'],
    ['--minutes', '0', false, 'positive number'],
    ['--rows', '', true, 'positive integer'],
    ['BENCH_ROWS (for --rows)', ' ', true, 'positive integer'],
  ])('refuses %s %p in one line, exit 2', (source, text, integer, kind) => {
    const { outcome, err } = settle(() => numberSetting({ text, source }, 1, integer));
    expect(outcome).toBe('exit 2');
    expect(err).toBe(`${source} must be a ${kind}, not '${text}'\n`);
  });

  it('refuses an empty flag even where 0 is allowed (Number reads blank as 0)', () => {
    expect(settle(() => numberSetting({ text: '', source: '--seed' }, 1, true, true)).err).toBe(
      "--seed must be a non-negative integer, not ''\n",
    );
  });
});

describe(integerListSetting.name, () => {
  it('reads each entry, or the fallback when not given', () => {
    expect(integerListSetting({ text: '40, 0,80', source: '--latencies' }, [1], true)).toEqual([
      40, 0, 80,
    ]);
    expect(integerListSetting({ text: undefined, source: '--latencies' }, [1, 2])).toEqual([1, 2]);
  });

  it('refuses an entry, naming the list', () => {
    const { outcome, err } = settle(() =>
      integerListSetting({ text: '40,,80', source: '--latencies' }, [1], true),
    );
    expect(outcome).toBe('exit 2');
    expect(err).toBe("--latencies must be a non-negative integer, not ''\n");
  });
});

describe(seedSetting.name, () => {
  const seed = (text: string | undefined, now?: number) =>
    seedSetting({ text, source: 'BENCH_FUZZ_SEED (for --seed)' }, now);

  it('takes the seed asked for, 0 included', () => {
    expect(seed('42')).toBe(42);
    expect(seed('0')).toBe(0);
  });

  it('draws one from the clock when none is asked for, within 31 bits', () => {
    expect(seed(undefined, 2 ** 31 + 1234)).toBe(1234);
  });

  it.each(['-1', '1.5', 'seed'])('refuses %p, naming the variable', (raw) => {
    expect(settle(() => seed(raw)).err).toBe(
      `BENCH_FUZZ_SEED (for --seed) must be a non-negative integer, not '${raw}'\n`,
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
