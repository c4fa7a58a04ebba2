// bench:health's targets: what it measures, and in which order each round runs them.

export const HEALTH_PATH = '/api/v1/health';

/** The servers measured, in the report's order (roundOrder gives each round's). */
export const TARGETS = [
  'bare node',
  'stock Nest',
  'bare Nest',
  'least path',
  'lean path',
  'lean in guards',
  'service',
] as const;
export type Target = (typeof TARGETS)[number];

/**
 * The order round `index` (1-based) runs the targets in. Each round starts one place later, so
 * no target always runs first, last or after the heaviest one (a position's effect would be a
 * bias the medians keep, not noise). Bare Nest and the service run next to each other, swapping
 * places each round: their ratio, the target's, compares neighbours in time.
 */
export function roundOrder(index: number): Target[] {
  const pair: Target[] = index % 2 === 1 ? ['bare Nest', 'service'] : ['service', 'bare Nest'];
  const units: Target[][] = [
    ...TARGETS.filter((target) => !pair.includes(target)).map((target) => [target]),
    pair,
  ];
  const start = (index - 1) % units.length;
  return [...units.slice(start), ...units.slice(0, start)].flat();
}
