import { normalizedWeights } from './weight-sum';

describe(normalizedWeights.name, () => {
  // Each expectation is what the subnet's uploader writes for the weights (data-universe
  // dynamic_desirability/data.py `_normalize_job_weights`), printed by python3:
  //   from decimal import Decimal as D
  //   t = sum(D(str(w)) for w in ws); [float(D(str(w)) / t) for w in ws]
  it.each([
    [
      [0.7, 0.1, 0.1, 0.1],
      [0.7, 0.1, 0.1, 0.1],
    ],
    [
      [0.3, 0.3, 0.3, 0.1],
      [0.3, 0.3, 0.3, 0.1],
    ],
    [
      [2, 1, 1],
      [0.5, 0.25, 0.25],
    ],
    [
      [1, 2, 3, 4, 5, 6, 7],
      [
        0.03571428571428571, 0.07142857142857142, 0.10714285714285714, 0.14285714285714285,
        0.17857142857142858, 0.21428571428571427, 0.25,
      ],
    ],
    [
      [123456789.123, 0.000123, 7],
      [0.9999999432990064, 9.962999515825161e-13, 5.6699997244533436e-8],
    ],
    [
      [1.7e308, 1.7e308, 1.7e308],
      [0.3333333333333333, 0.3333333333333333, 0.3333333333333333],
    ],
    [
      [1e308, 1e308, 1e-10, 1e-320],
      [0.5, 0.5, 5e-319, 0],
    ],
    [
      [1, 1, 5e-324],
      [0.5, 0.5, 5e-324],
    ],
  ])('divides %p as the uploader does: %p', (weights, expected) => {
    expect(normalizedWeights(weights)).toEqual(expected);
  });
});
