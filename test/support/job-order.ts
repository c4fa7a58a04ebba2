/**
 * A desirability job as every answer lists it: keys in the declared order, params too (votes
 * and the network aggregate come back from jsonb in its own order; `inJobOrder` restores it).
 */
export function expectDeclaredJobOrder(job: { params: object }): void {
  expect(Object.keys(job)).toEqual(['id', 'weight', 'params']);
  expect(Object.keys(job.params)).toEqual([
    'platform',
    'label',
    'keyword',
    'post_start_datetime',
    'post_end_datetime',
  ]);
}
