/** `value` rounded to `decimals` places, for figures shown to people (not for money). */
export function roundTo(value: number, decimals: number): number {
  const factor = 10 ** decimals;
  return Math.round(value * factor) / factor;
}
