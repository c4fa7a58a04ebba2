import { Clock } from './clock';
import {
  ClockSimulation,
  formatClockSimulation,
  parseClockSimulation,
  simulatedTime,
} from './clock-simulation';

const START = Date.parse('2026-01-01T00:00:00Z');
const MINUTE = 60_000;

describe(Clock.name, () => {
  afterEach(() => jest.useRealTimers());

  it('tells the real time, moved by advance', () => {
    jest.useFakeTimers({ now: START });
    const clock = new Clock();
    expect(clock.now().getTime()).toBe(START);
    clock.advance(5 * MINUTE);
    expect(clock.now().getTime()).toBe(START + 5 * MINUTE);
  });

  it('runs a simulation from its start at its rate, from the real anchor on', () => {
    const anchor = Date.parse('2025-06-01T12:00:00Z');
    jest.useFakeTimers({ now: anchor });
    const clock = new Clock({ startMs: START, anchorMs: anchor, rate: 60 });
    expect(clock.now().getTime()).toBe(START);
    jest.setSystemTime(anchor + 1000);
    expect(clock.now().getTime()).toBe(START + MINUTE);
    jest.setSystemTime(anchor + 60_000);
    expect(clock.now().toISOString()).toBe('2026-01-01T01:00:00.000Z');
    clock.advance(MINUTE);
    expect(clock.now().toISOString()).toBe('2026-01-01T01:01:00.000Z');
  });

  it('runs as far from the machine as simulated and advanced: 0 without either, whatever the machine says', () => {
    jest.useFakeTimers({ now: START });
    const real = new Clock();
    expect(real.shiftMs()).toBe(0);
    jest.setSystemTime(START - 45 * MINUTE);
    expect(real.shiftMs()).toBe(0);
    real.advance(5 * MINUTE);
    expect(real.shiftMs()).toBe(5 * MINUTE);

    const anchor = Date.parse('2025-06-01T12:00:00Z');
    jest.setSystemTime(anchor + 1000);
    const simulated = new Clock({ startMs: START, anchorMs: anchor, rate: 60 });
    expect(simulated.shiftMs()).toBe(simulated.now().getTime() - Date.now());
  });

  it('gives two processes started apart the same time when they share the setting', () => {
    const anchor = Date.parse('2025-06-01T12:00:00Z');
    const setting = formatClockSimulation({ startMs: START, anchorMs: anchor, rate: 90 });
    jest.useFakeTimers({ now: anchor + 5_000 });
    const first = new Clock(parseClockSimulation(setting));
    jest.setSystemTime(anchor + 20_000);
    const second = new Clock(parseClockSimulation(setting));
    expect(second.now().getTime()).toBe(first.now().getTime());
    expect(first.now().getTime()).toBe(START + 20_000 * 90);
  });
});

describe(parseClockSimulation.name, () => {
  it('reads start, anchor and rate, and formats them back', () => {
    const simulation: ClockSimulation = { startMs: START, anchorMs: 1767225600000, rate: 1.5 };
    expect(parseClockSimulation('2026-01-01T00:00:00Z@1767225600000x1.5')).toEqual(simulation);
    expect(parseClockSimulation(formatClockSimulation(simulation))).toEqual(simulation);
    expect(parseClockSimulation('2026-01-01T01:00:00+01:00@0x1').startMs).toBe(START);
  });

  it.each([
    ['no rate', '2026-01-01T00:00:00Z@1767225600000', /must be <simulated start/],
    ['a date without a time', '2026-01-01@1767225600000x60', /not an ISO 8601 date-time/],
    ['a local time', '2026-01-01T00:00:00@1767225600000x60', /not an ISO 8601 date-time/],
    // Date.parse rolled these over into the next days (a time audit's finding).
    ['30 February', '2026-02-30T00:00:00Z@0x1', /not an ISO 8601 date-time/],
    ['hour 24', '2026-01-01T24:00:00Z@0x1', /not an ISO 8601 date-time/],
    ['an impossible date', '2026-13-45T00:00:00Z@1767225600000x60', /not an ISO 8601 date-time/],
    ['a rate of 0', '2026-01-01T00:00:00Z@1767225600000x0', /above 0 and at most 10000/],
    ['a rate too high', '2026-01-01T00:00:00Z@1767225600000x20000', /above 0 and at most 10000/],
  ])('refuses %s, saying why', (_, text, message) => {
    expect(() => parseClockSimulation(text)).toThrow(message);
  });

  it('moves simulated time at the rate, before the anchor too', () => {
    const simulation = { startMs: START, anchorMs: 1_000_000, rate: 100 };
    expect(simulatedTime(simulation, 1_000_000)).toBe(START);
    expect(simulatedTime(simulation, 999_000)).toBe(START - 100_000);
  });
});
