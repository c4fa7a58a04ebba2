import { foldObservation } from './miners.repository';

describe(foldObservation.name, () => {
  it('folds several observations into the same result as one EMA step each', () => {
    const alpha = 0.2;
    const scores = [1, 0, 0.5, 0.75];
    let update = undefined as ReturnType<typeof foldObservation> | undefined;
    for (const score of scores) update = foldObservation(update, 7, score, alpha);
    for (const start of [0, 0.5, 0.9]) {
      const stepwise = scores.reduce(
        (credibility, score) => credibility + alpha * (score - credibility),
        start,
      );
      expect(start * update!.decay + update!.add).toBeCloseTo(stepwise, 12);
    }
    expect(update!.uid).toBe(7);
  });

  it('is the identity before any observation', () => {
    const single = foldObservation(undefined, 1, 0.3, 0.5);
    expect(single).toEqual({ uid: 1, decay: 0.5, add: 0.15 });
  });
});
