import { parseIsoDate } from '../validation/iso-date';

/**
 * CLOCK_SIMULATION (tests only): the process's time runs from a simulated start at a rate,
 * anchored to a real instant, so that several processes (two gateways and a test's devnet)
 * started apart agree on the simulated time without talking to each other: at the real instant
 * `anchorMs` it is `startMs`, and every real millisecond after it is `rate` simulated ones.
 * Written `<simulated start, ISO 8601>@<real anchor, Unix ms>x<rate>`, for example
 * `2026-01-01T00:00:00Z@1767225600000x60` (an hour of simulated time per real minute).
 */
export interface ClockSimulation {
  startMs: number;
  anchorMs: number;
  rate: number;
}

/** At most this many simulated milliseconds per real one: beyond, timeouts mean nothing. */
export const MAX_CLOCK_RATE = 10_000;

const FORMAT = /^(?<start>[^@]+)@(?<anchor>\d{1,16})x(?<rate>\d+(?:\.\d+)?)$/;
// A date-time with its offset: a date alone or a local time would mean different instants to
// processes in different time zones.
const ISO_INSTANT = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:\d{2})$/;

/** Parses the setting; throws an Error saying what is wrong. */
export function parseClockSimulation(text: string): ClockSimulation {
  const match = FORMAT.exec(text.trim());
  if (!match?.groups)
    throw new Error(
      'must be <simulated start ISO 8601>@<real anchor Unix ms>x<rate>, e.g. 2026-01-01T00:00:00Z@1767225600000x60',
    );
  const { start, anchor, rate } = match.groups;
  // Read as every date is (parseIsoDate): Date.parse rolled 2026-02-30 over to 2 March.
  const startMs = parseIsoDate(start)?.getTime();
  if (!ISO_INSTANT.test(start) || startMs === undefined)
    throw new Error(`"${start}" is not an ISO 8601 date-time with its offset (e.g. ...T00:00:00Z)`);
  const speed = Number(rate);
  if (!(speed > 0 && speed <= MAX_CLOCK_RATE))
    throw new Error(`the rate must be above 0 and at most ${MAX_CLOCK_RATE}, not ${rate}`);
  return { startMs, anchorMs: Number(anchor), rate: speed };
}

/** The setting's text for a simulation (what a test passes to the processes it starts). */
export function formatClockSimulation(simulation: ClockSimulation): string {
  return `${new Date(simulation.startMs).toISOString()}@${simulation.anchorMs}x${simulation.rate}`;
}

/** The simulated time (ms) at the real instant `realMs`. */
export function simulatedTime(simulation: ClockSimulation, realMs: number): number {
  return simulation.startMs + (realMs - simulation.anchorMs) * simulation.rate;
}
