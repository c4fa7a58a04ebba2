/**
 * Now on a monotonic clock, in whole milliseconds: for in-process windows, cool-downs and
 * lockouts, which a wall clock set back would stretch and one set forward would end early
 * (docs/decisions.md, "Clocks"). Whole milliseconds, as Redis' PTTL and Date.now are: with
 * fractions, `now + 5000 - now` came out a hair over 5000, and a 5 s window said 6 s.
 */
export const monotonicNow = (): number => Math.floor(performance.now());
