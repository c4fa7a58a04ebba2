import { MinerEntity } from '../../src/network/miner.entity';
import { foldObservation } from '../../src/network/credibility-recorder';
import { MinersRepository, StaleMetagraphError } from '../../src/network/miners.repository';
import { MediumDatabase, openMediumDatabase } from '../support/medium-database';
import { metagraphNeuron } from '../support/neurons';
import { minerIndexOn } from '../support/miner-index';

/** A neuron of the metagraph at `uid` with `hotkey` and no axon, the rest alike for every one. */
function neuron(uid: number, hotkey: string) {
  return metagraphNeuron(uid, { hotkey, axon_url: null });
}

/** A circuit's cooldown longer than any test here. */
const COOLDOWN_MS = 60_000;

describe(MinersRepository.name, () => {
  let medium: MediumDatabase;
  let miners: MinersRepository;

  beforeAll(async () => {
    // A database of its own: the spec owns the miners table.
    medium = await openMediumDatabase({ own: 'miners', entities: [MinerEntity] });
    const index = minerIndexOn(medium.dataSource).service;
    miners = new MinersRepository(medium.dataSource, index);
  });
  afterAll(() => medium.close());

  /** Registers uids 0..count-1 afresh, every one at the starting credibility of 0.5. */
  async function freshMiners(count: number, hotkeyPrefix: string) {
    await miners.syncNeurons(
      Array.from({ length: count }, (_, uid) => neuron(uid, `${hotkeyPrefix}-${uid}`)),
    );
  }

  describe('syncNeurons', () => {
    const hotkeys = async () =>
      Object.fromEntries((await miners.listAll()).map((miner) => [miner.uid, miner.hotkey]));

    // miners_hotkey_idx is unique: a hotkey arriving at a new uid while a row still held it
    // failed the whole sync, and every later one, so the metagraph stayed as it was for good.
    it('applies a hotkey that moved to another uid, the old uid gone from the metagraph', async () => {
      await miners.syncNeurons([neuron(0, 'moving'), neuron(1, 'staying')]);

      await miners.syncNeurons([neuron(1, 'staying'), neuron(2, 'moving')]);

      expect(await hotkeys()).toEqual({ 1: 'staying', 2: 'moving' });
    });

    it('applies hotkeys that swapped uids, and a hotkey moving onto a uid that changed hands', async () => {
      await miners.syncNeurons([neuron(0, 'a'), neuron(1, 'b'), neuron(2, 'c')]);

      const { hotkeyChanged } = await miners.syncNeurons([
        neuron(0, 'b'),
        neuron(1, 'a'),
        neuron(2, 'd'),
      ]);
      expect(hotkeyChanged.sort()).toEqual([0, 1, 2]);
      expect(await hotkeys()).toEqual({ 0: 'b', 1: 'a', 2: 'd' });

      await miners.syncNeurons([neuron(0, 'c'), neuron(1, 'a')]);
      expect(await hotkeys()).toEqual({ 0: 'c', 1: 'a', 2: 'd' });
    });
  });

  describe('applyCredibilityUpdates', () => {
    it('moves credibility by a run of observations as one EMA step per observation', async () => {
      await freshMiners(1, 'ema');
      const alpha = 0.2;
      const scores = [1, 0, 0.5, 0.75];
      const miner = { uid: 0, hotkey: 'ema-0' };
      let update = foldObservation(undefined, miner, scores[0], alpha);
      for (const score of scores.slice(1)) update = foldObservation(update, miner, score, alpha);
      const stepwise = scores.reduce((value, score) => value + alpha * (score - value), 0.5);

      const applied = await miners.applyCredibilityUpdates([update]);
      expect(applied.get(0)).toBeCloseTo(stepwise, 6);
      expect((await miners.listAll())[0].credibility).toBeCloseTo(stepwise, 6);
    });

    it('keeps credibility within 0..1 whatever the update', async () => {
      await freshMiners(3, 'clamp');
      const applied = await miners.applyCredibilityUpdates([
        { uid: 0, hotkey: 'clamp-0', decay: 1, add: 1.5 },
        { uid: 1, hotkey: 'clamp-1', decay: 0, add: -1 },
        { uid: 2, hotkey: 'clamp-2', decay: 1, add: 0 },
      ]);
      expect([...applied].sort(([a], [b]) => a - b)).toEqual([
        [0, 1],
        [1, 0],
        [2, 0.5],
      ]);
    });

    // A call to the uid's old hotkey, answered (or timed out) after the uid was re-registered,
    // moved the new miner's credibility (a metagraph-churn audit's finding).
    it('leaves a uid whose hotkey is no longer the one observed as it is', async () => {
      await freshMiners(2, 'renamed');
      const applied = await miners.applyCredibilityUpdates([
        { uid: 0, hotkey: 'the-old-owner', decay: 0, add: 0 },
        { uid: 1, hotkey: 'renamed-1', decay: 0, add: 0 },
      ]);
      expect([...applied]).toEqual([[1, 0]]);
      const credibility = new Map((await miners.listAll()).map((m) => [m.uid, m.credibility]));
      expect([credibility.get(0), credibility.get(1)]).toEqual([0.5, 0]);
    });
  });

  describe('setState', () => {
    const metagraph = [0, 1, 2].map((uid) => metagraphNeuron(uid, { hotkey: `state-${uid}` }));

    const states = async () =>
      Object.fromEntries(
        (await miners.listAll()).map((miner) => [miner.uid, [miner.state, miner.failingUntil]]),
      );

    it('keeps a failing state for the cooldown and a refused address refused, over a sync', async () => {
      await miners.syncNeurons(metagraph, { refused: new Set([2]) });
      const before = Date.now();
      await miners.setState(metagraph[1], 'failing', COOLDOWN_MS);
      // A refused address stays refused whatever a circuit says.
      await miners.setState(metagraph[2], 'active', COOLDOWN_MS);
      await miners.syncNeurons(metagraph, { refused: new Set([2]) });

      const after = await states();
      expect(after).toMatchObject({ 0: ['active', null], 2: ['address_refused', null] });
      const [state, until] = after[1] as [string, Date];
      expect(state).toBe('failing');
      // Postgres's clock against this one's: within a second.
      expect(Math.abs(until.getTime() - (before + COOLDOWN_MS))).toBeLessThan(1000);
      await miners.setState(metagraph[1], 'active', COOLDOWN_MS);
      expect((await states())[1]).toEqual(['active', null]);
    });

    // The old owner's circuit opening late made the new one `failing` (an audit's finding).
    it('writes no state to a uid re-registered by another hotkey', async () => {
      await miners.syncNeurons(metagraph);
      await miners.setState({ uid: 0, hotkey: 'the-old-owner' }, 'failing', COOLDOWN_MS);
      expect((await states())[0]).toEqual(['active', null]);
    });
  });

  describe('the block of the metagraph applied', () => {
    const hotkeysOf = async () =>
      Object.fromEntries(
        (await miners.listAll())
          .filter((miner) => miner.state !== 'deregistered')
          .map((miner) => [miner.uid, miner.hotkey]),
      );
    const origin = (block: number, source = 'subtensor ws://node netuid 13') => ({
      origin: { network: 'subtensor' as const, source, netuid: 13, block },
    });

    // A lagging node (a replica's, or one behind a load balancer) answered an older block: it
    // overwrote the newer metagraph another read had stored.
    it('refuses a read at a lower block than the stored one of the same source and netuid', async () => {
      await miners.syncNeurons([neuron(0, 'b-0'), neuron(1, 'b-1')], origin(1000));
      await expect(miners.syncNeurons([neuron(0, 'b-0')], origin(990))).rejects.toThrow(
        StaleMetagraphError,
      );
      expect(await miners.lastMetagraph()).toMatchObject({ block: 1000, neurons: 2 });
      expect((await miners.listAll()).filter((m) => m.state !== 'deregistered')).toHaveLength(2);
      // Another source's blocks may be another chain's: not compared.
      await miners.syncNeurons([neuron(0, 'b-0')], origin(5, 'subtensor ws://other netuid 13'));
      expect(await miners.lastMetagraph()).toMatchObject({ block: 5 });
    });

    // A reset testnet or local node starts a new chain behind the same address, at block 0:
    // refused for its lower block, the old chain's miners stayed in use (and the error blamed
    // lag) until the new chain passed the old block.
    it('applies a lower block of another chain from the same source, and still refuses one of the same chain', async () => {
      const OLD_CHAIN = `0x${'a1'.repeat(32)}`;
      const NEW_CHAIN = `0x${'b2'.repeat(32)}`;
      const of = (block: number, genesisHash: string | null) => ({
        origin: { ...origin(block).origin, genesisHash },
      });
      await miners.syncNeurons([neuron(0, 'g-0'), neuron(1, 'g-1')], of(50_000, OLD_CHAIN));
      await expect(miners.syncNeurons([neuron(0, 'g-0')], of(49_990, OLD_CHAIN))).rejects.toThrow(
        StaleMetagraphError,
      );

      const { otherChain } = await miners.syncNeurons(
        [neuron(0, 'g-new-0'), neuron(1, 'g-new-1')],
        of(10, NEW_CHAIN),
      );
      expect(otherChain).toEqual({ genesisHash: OLD_CHAIN, block: 50_000 });
      const stored = (await miners.lastMetagraph())!;
      expect(stored).toMatchObject({ block: 10, genesisHash: NEW_CHAIN, neurons: 2 });
      expect(stored.blockAdvancedAt).toEqual(stored.readAt);
      expect(await hotkeysOf()).toEqual({ 0: 'g-new-0', 1: 'g-new-1' });
      // The new chain's own blocks only move forward.
      await expect(miners.syncNeurons([neuron(0, 'g-new-0')], of(9, NEW_CHAIN))).rejects.toThrow(
        StaleMetagraphError,
      );
      expect(await miners.lastMetagraph()).toMatchObject({ block: 10, genesisHash: NEW_CHAIN });
    });

    // A row stored before the genesis was recorded is of a chain not known: not compared.
    it('applies a node read over a stored metagraph whose chain was not recorded', async () => {
      await miners.syncNeurons([neuron(0, 'u-0')], origin(3000));
      const chain = `0x${'c3'.repeat(32)}`;
      const { otherChain } = await miners.syncNeurons([neuron(0, 'u-0')], {
        origin: { ...origin(20).origin, genesisHash: chain },
      });
      expect(otherChain).toEqual({ genesisHash: null, block: 3000 });
      expect(await miners.lastMetagraph()).toMatchObject({ block: 20, genesisHash: chain });
    });

    // A file's block is what its writer put there: an operator may go back to an earlier file
    // (the metagraph-sync e2e's files count their neurons as their block).
    it("applies a metagraph file's lower block, which no node lags behind", async () => {
      const file = (block: number) => ({
        origin: { network: 'file' as const, source: 'file /etc/metagraph.json', netuid: 13, block },
      });
      await miners.syncNeurons([neuron(0, 'f-0'), neuron(1, 'f-1')], file(102));
      await miners.syncNeurons([neuron(0, 'f-0')], file(101));
      expect(await miners.lastMetagraph()).toMatchObject({ block: 101, neurons: 1 });
    });

    // A node stuck at a block is read again and again: health needs when the block moved.
    it('moves blockAdvancedAt only when the block advances', async () => {
      await miners.syncNeurons([neuron(0, 'c-0')], origin(2000));
      const first = (await miners.lastMetagraph())!;
      await new Promise((resolve) => setTimeout(resolve, 20));
      await miners.syncNeurons([neuron(0, 'c-0')], origin(2000));
      const again = (await miners.lastMetagraph())!;
      expect(again.readAt.getTime()).toBeGreaterThan(first.readAt.getTime());
      expect(again.blockAdvancedAt).toEqual(first.blockAdvancedAt);
      await miners.syncNeurons([neuron(0, 'c-0')], origin(2001));
      const moved = (await miners.lastMetagraph())!;
      expect(moved.blockAdvancedAt).toEqual(moved.readAt);
    });
  });

  describe('lastMetagraph', () => {
    // The suspicious-read check is skipped for a read of another subnet: it needs the netuid.
    it('keeps the netuid of the metagraph applied', async () => {
      const origin = {
        network: 'subtensor' as const,
        source: 'subtensor ws://node netuid 7',
        block: 70,
      };
      await miners.syncNeurons([neuron(0, 'n-0')], { origin: { ...origin, netuid: 7 } });
      expect(await miners.lastMetagraph()).toMatchObject({ ...origin, netuid: 7, neurons: 1 });
    });
  });
});
