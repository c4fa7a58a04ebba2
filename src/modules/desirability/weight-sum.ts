import Decimal from 'decimal.js';

/** Python's default decimal context (28 significant digits, ties to even). */
const PythonDecimal = Decimal.clone({ precision: 28, rounding: Decimal.ROUND_HALF_EVEN });

/**
 * Weights over their sum as the subnet's uploader computes them (data-universe
 * `dynamic_desirability/data.py`, `_normalize_job_weights`: each weight's `Decimal(str(w))` over
 * their Decimal sum, in Python's default context, then the nearest float), so that the file we
 * publish is the uploader's byte for byte. Divided in binary floating point, [0.7, 0.1, 0.1, 0.1]
 * came out 0.7000000000000001 and 0.10000000000000002 (an audit's finding). A share too small
 * for a double is 0; no sum overflows. A JavaScript number's shortest text is Python's `repr`'s
 * digits.
 */
export function normalizedWeights(weights: readonly number[]): number[] {
  const decimals = weights.map((weight) => new PythonDecimal(String(weight)));
  const total = decimals.reduce((sum, weight) => sum.plus(weight), new PythonDecimal(0));
  return decimals.map((weight) => Number(weight.dividedBy(total).toString()));
}

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
