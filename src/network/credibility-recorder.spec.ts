import { CredibilityRecorder, foldObservation } from './credibility-recorder';
import { MetagraphService } from './metagraph/metagraph.service';
import { CredibilityUpdate, MinersRepository } from './miners.repository';
import { testConfig } from '../../test/support/test-config';

/** A recorder over a fake repository whose state writes take 20 ms. */
function recorder() {
  const written: CredibilityUpdate[] = [];
  const states: [{ uid: number; hotkey: string }, string][] = [];
  const repository = {
    applyCredibilityUpdates: (updates: CredibilityUpdate[]) => {
      written.push(...updates);
      return Promise.resolve([]);
    },
    setState: (miner: { uid: number; hotkey: string }, state: string) =>
      new Promise<void>((resolve) =>
        setTimeout(() => {
          states.push([miner, state]);
          resolve();
        }, 20),
      ),
  } as unknown as MinersRepository;
  const metagraph = {
    updateCredibility: () => undefined,
    updateState: () => undefined,
  } as unknown as MetagraphService;
  const config = testConfig({ network: { credibilityAlpha: 0.5 } });
  return { recorder: new CredibilityRecorder(repository, metagraph, config), written, states };
}

describe(CredibilityRecorder.name, () => {
  // A 0 (a failed call) is an observation that lowers credibility; null (no observation) is not.
  it('folds a score of 0 and skips only null', async () => {
    const { recorder: r, written } = recorder();
    r.record([
      { uid: 1, hotkey: 'hk-1', score: 0 },
      { uid: 2, hotkey: 'hk-2', score: null },
    ]);
    await r.settled();
    expect(written).toEqual([{ uid: 1, hotkey: 'hk-1', decay: 0.5, add: 0 }]);
  });

  // A uid re-registered while a call to its old hotkey was in flight: two miners, two updates,
  // each for the hotkey observed (the repository writes only the one the uid still is).
  it('folds observations per uid and hotkey', async () => {
    const { recorder: r, written } = recorder();
    r.record([
      { uid: 1, hotkey: 'old', score: 0 },
      { uid: 1, hotkey: 'new', score: 1 },
      { uid: 1, hotkey: 'new', score: 1 },
    ]);
    await r.settled();
    expect(written).toEqual([
      { uid: 1, hotkey: 'old', decay: 0.5, add: 0 },
      { uid: 1, hotkey: 'new', decay: 0.25, add: 0.75 },
    ]);
  });

  // Shutdown waits on settled(): a state change still being written would be lost.
  it('settles only once state changes are written', async () => {
    const { recorder: r, states } = recorder();
    r.recordState({ uid: 3, hotkey: 'hk-3' }, 'failing');
    await new Promise((resolve) => setTimeout(resolve, 5));
    await r.settled();
    expect(states).toEqual([[{ uid: 3, hotkey: 'hk-3' }, 'failing']]);
    await r.beforeApplicationShutdown();
  });
});

describe(foldObservation.name, () => {
  it('folds several observations into the same result as one EMA step each', () => {
    const alpha = 0.2;
    const scores = [1, 0, 0.5, 0.75];
    let update = undefined as ReturnType<typeof foldObservation> | undefined;
    for (const score of scores)
      update = foldObservation(update, { uid: 7, hotkey: 'hk-7' }, score, alpha);
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
    const single = foldObservation(undefined, { uid: 1, hotkey: 'hk-1' }, 0.3, 0.5);
    expect(single).toEqual({ uid: 1, hotkey: 'hk-1', decay: 0.5, add: 0.15 });
  });
});
