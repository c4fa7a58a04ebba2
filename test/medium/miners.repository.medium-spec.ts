import { MinerEntity } from '../../src/network/miner.entity';
import { foldObservation, MinersRepository } from '../../src/network/miners.repository';
import { MediumDatabase, openMediumDatabase } from '../support/medium-database';

describe(MinersRepository.name, () => {
  let medium: MediumDatabase;
  let miners: MinersRepository;

  beforeAll(async () => {
    // A database of its own: the spec owns the miners table.
    medium = await openMediumDatabase({ own: 'miners', entities: [MinerEntity] });
    miners = new MinersRepository(medium.dataSource);
  });
  afterAll(() => medium.close());

  /** Registers uids 0..count-1 afresh, every one at the starting credibility of 0.5. */
  async function freshMiners(count: number, hotkeyPrefix: string) {
    const neurons = Array.from({ length: count }, (_, uid) => ({
      uid,
      hotkey: `${hotkeyPrefix}-${uid}`,
      coldkey: `coldkey-${uid}`,
      axon_url: null,
      stake: 1,
      incentive: 0.1,
      validator_permit: false,
    }));
    await miners.syncNeurons(neurons);
  }

  describe('applyCredibilityUpdates', () => {
    it('moves credibility by a run of observations as one EMA step per observation', async () => {
      await freshMiners(1, 'ema');
      const alpha = 0.2;
      const scores = [1, 0, 0.5, 0.75];
      let update = foldObservation(undefined, 0, scores[0], alpha);
      for (const score of scores.slice(1)) update = foldObservation(update, 0, score, alpha);
      const stepwise = scores.reduce((value, score) => value + alpha * (score - value), 0.5);

      const applied = await miners.applyCredibilityUpdates([update]);
      expect(applied.get(0)).toBeCloseTo(stepwise, 6);
      expect((await miners.listAll())[0].credibility).toBeCloseTo(stepwise, 6);
    });

    it('keeps credibility within 0..1 whatever the update', async () => {
      await freshMiners(3, 'clamp');
      const applied = await miners.applyCredibilityUpdates([
        { uid: 0, decay: 1, add: 1.5 },
        { uid: 1, decay: 0, add: -1 },
        { uid: 2, decay: 1, add: 0 },
      ]);
      expect([...applied].sort(([a], [b]) => a - b)).toEqual([
        [0, 1],
        [1, 0],
        [2, 0.5],
      ]);
    });
  });
});
