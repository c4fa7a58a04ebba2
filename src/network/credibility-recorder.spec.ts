import { AppConfig } from '../config/app-config';
import { CredibilityRecorder, foldObservation } from './credibility-recorder';
import { MetagraphService } from './metagraph/metagraph.service';
import { CredibilityUpdate, MinersRepository } from './miners.repository';

/** A recorder over a fake repository whose state writes take 20 ms. */
function recorder() {
  const written: CredibilityUpdate[] = [];
  const states: [number, string][] = [];
  const repository = {
    applyCredibilityUpdates: (updates: CredibilityUpdate[]) => {
      written.push(...updates);
      return Promise.resolve([]);
    },
    setState: (uid: number, state: string) =>
      new Promise<void>((resolve) =>
        setTimeout(() => {
          states.push([uid, state]);
          resolve();
        }, 20),
      ),
  } as unknown as MinersRepository;
  const metagraph = {
    updateCredibility: () => undefined,
    updateState: () => undefined,
  } as unknown as MetagraphService;
  const config = { network: { credibilityAlpha: 0.5 } } as unknown as AppConfig;
  return { recorder: new CredibilityRecorder(repository, metagraph, config), written, states };
}

describe(CredibilityRecorder.name, () => {
  // A 0 (a failed call) is an observation that lowers credibility; null (no observation) is not.
  it('folds a score of 0 and skips only null', async () => {
    const { recorder: r, written } = recorder();
    r.record([
      { uid: 1, score: 0 },
      { uid: 2, score: null },
    ]);
    await r.settled();
    expect(written).toEqual([{ uid: 1, decay: 0.5, add: 0 }]);
  });

  // Shutdown waits on settled(): a state change still being written would be lost.
  it('settles only once state changes are written', async () => {
    const { recorder: r, states } = recorder();
    r.recordState(3, 'failing');
    await new Promise((resolve) => setTimeout(resolve, 5));
    await r.settled();
    expect(states).toEqual([[3, 'failing']]);
    await r.beforeApplicationShutdown();
  });
});

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
