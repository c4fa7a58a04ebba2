/**
 * The weights and their sum, ready to be divided by it: huge weights, whose sum would overflow
 * to infinity, are first scaled down by the largest (their ratios stay).
 */
export function summedWeights(weights: readonly number[]): { weights: number[]; total: number } {
  let finite = [...weights];
  if (!Number.isFinite(sum(finite))) {
    const largest = Math.max(...finite);
    finite = finite.map((weight) => weight / largest);
  }
  return { weights: finite, total: sum(finite) };
}

function sum(values: readonly number[]): number {
  return values.reduce((total, value) => total + value, 0);
}
