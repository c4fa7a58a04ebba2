import type { ApiPromise } from '@polkadot/api';
import { useConnectedChainReplay } from '../../../test/support/connected-chain-replay';
import { Sr25519Keypair } from '../bittensor/keypair';
import {
  epochIndex,
  rateLimitResetBlock,
  readCommitmentWindow,
  readWindowAhead,
  ruleOfError,
  spaceResetBlock,
} from './commitment-window';

const [ALICE, BOB] = ['//Alice', '//Bob'].map((uri) => Sr25519Keypair.fromUri(uri).address);

// Subnet 13 at tempo 360: epochs of 361 blocks, offset by 14 (subtensor's get_epoch_index,
// (block + netuid + 1) / (tempo + 1)). Block 6,852,690 is in epoch 18,982, whose last block is
// 6,852,848: 18,983 × 361 − 14 = 6,852,849 starts the next.
describe(epochIndex.name, () => {
  it('counts epochs of tempo + 1 blocks, offset by netuid + 1', () => {
    expect(epochIndex(6_852_690, 360, 13)).toBe(18_982);
    expect(epochIndex(6_852_848, 360, 13)).toBe(18_982);
    expect(epochIndex(6_852_849, 360, 13)).toBe(18_983);
    expect(epochIndex(0, 360, 0)).toBe(0);
    expect(epochIndex(360, 360, 0)).toBe(1);
  });
});

describe('when the chain takes a commitment again', () => {
  describe(`the space rule (${spaceResetBlock.name})`, () => {
    it('is the first block of the epoch after the one the used space was counted in', () => {
      const full = { lastEpoch: 18_982, usedSpace: 3100 };
      expect(spaceResetBlock(full, 3100, 6_852_690, 360, 13)).toBe(6_852_849);
      // Refused in the epoch's last block: the next one takes it.
      expect(spaceResetBlock(full, 3100, 6_852_848, 360, 13)).toBe(6_852_849);
      expect(spaceResetBlock({ lastEpoch: 5, usedSpace: 100 }, 100, 52, 9, 1)).toBe(58);
      // A runtime without MaxSpace: the count of the refusal's epoch is taken as the reason.
      expect(spaceResetBlock({ lastEpoch: 5, usedSpace: 0 }, undefined, 52, 9, 1)).toBe(58);
    });

    // The count is of an epoch before the refusal's: the space was free, so something else
    // refused it (a commitment larger than MaxSpace); the storage says nothing of when.
    it('says nothing when the used space was counted before the refusal’s epoch', () => {
      const full = { lastEpoch: 18_981, usedSpace: 3100 };
      expect(spaceResetBlock(full, 3100, 6_852_690, 360, 13)).toBeUndefined();
    });

    // Room left for a SHA under MaxSpace: the space rule did not refuse it (a refusal forced by
    // hand in the e2e tests; on the chain, another limit), so it says nothing of when.
    it('says nothing when the count leaves room for a SHA under MaxSpace', () => {
      const room = { lastEpoch: 18_982, usedSpace: 3000 };
      expect(spaceResetBlock(room, 3100, 6_852_690, 360, 13)).toBeUndefined();
      expect(spaceResetBlock(room, 3099, 6_852_690, 360, 13)).toBe(6_852_849);
    });
  });

  describe(`the rate rule (${rateLimitResetBlock.name})`, () => {
    it('is RateLimit blocks after the last commitment', () => {
      expect(rateLimitResetBlock(1000, 100, 1001)).toBe(1100);
      expect(rateLimitResetBlock(1000, 100, 1099)).toBe(1100);
    });

    it('says nothing when the last commitment is old enough to allow it', () => {
      expect(rateLimitResetBlock(1000, 100, 1100)).toBeUndefined();
    });
  });

  it('tells the rules apart by the error the chain answered', () => {
    expect(ruleOfError('SpaceLimitExceeded')).toBe('space');
    expect(ruleOfError('CommitmentSetRateLimitExceeded')).toBe('rate');
    expect(ruleOfError('TooManyFieldsInCommitmentInfo')).toBeUndefined();
  });
});

describe('readCommitmentWindow against the chain stand-in (recorded finney metadata, spec 343)', () => {
  const chain = useConnectedChainReplay();
  const read = (hotkey: string, refusedAt?: number) =>
    chain.connection.use((api) => readCommitmentWindow(api, 13, hotkey, 'space', refusedAt));

  it('reads UsedSpaceOf, the tempo and the head', async () => {
    const head = chain.replay.extrinsics.head;
    expect(head).toBe(6_852_690);
    chain.replay.setUsedSpace(13, ALICE, { lastEpoch: 18_982, usedSpace: 3100 });
    expect(await read(ALICE, head)).toEqual({ acceptedFrom: 6_852_849, head, intervalBlocks: 361 });
    // The refusal's block unknown: the head's.
    expect(await read(ALICE)).toEqual({ acceptedFrom: 6_852_849, head, intervalBlocks: 361 });

    chain.replay.setTempo(13, 99);
    // (6,852,690 + 14) / 100 = epoch 68,527; 68,528 × 100 − 14.
    chain.replay.setUsedSpace(13, ALICE, { lastEpoch: 68_527, usedSpace: 3100 });
    expect(await read(ALICE, head)).toEqual({ acceptedFrom: 6_852_786, head, intervalBlocks: 100 });
    chain.replay.setTempo(13, 360);
  });

  it('says nothing without a count, or with one of an earlier epoch', async () => {
    chain.replay.setUsedSpace(13, BOB, undefined);
    expect(await read(BOB)).toBeUndefined();
    chain.replay.setUsedSpace(13, BOB, { lastEpoch: 18_981, usedSpace: 3100 });
    expect(await read(BOB)).toBeUndefined();
  });

  it('reads MaxSpace: a count with room left for a SHA does not explain a refusal', async () => {
    chain.replay.setUsedSpace(13, BOB, { lastEpoch: 18_982, usedSpace: 100 });
    expect(await read(BOB, 6_852_690)).toBeUndefined();
    chain.replay.extrinsics.maxSpace = 100;
    try {
      expect(await read(BOB, 6_852_690)).toMatchObject({ acceptedFrom: 6_852_849 });
    } finally {
      chain.replay.extrinsics.maxSpace = 3100;
    }
  });

  // The recorded runtime has LastCommitment but no RateLimit: the rate rule cannot be read.
  it('says nothing of the rate rule, which this runtime does not have', async () => {
    expect(
      await chain.connection.use((api) => readCommitmentWindow(api, 13, ALICE, 'rate', 6_852_690)),
    ).toBeUndefined();
  });
});

/**
 * An older runtime's storage, for the rate rule: `LastCommitment`, and `RateLimit` as a storage
 * value (`stored`) or, in the oldest, as a constant (`constant`); the head is `head`.
 */
function olderRuntime(values: {
  head: number;
  last?: number;
  stored?: number;
  constant?: number;
}): ApiPromise {
  const codec = (value: number) => ({ toString: () => String(value) });
  const option = (value: number | undefined) =>
    value === undefined ? { isNone: true } : { isNone: false, unwrap: () => codec(value) };
  const answer =
    <T>(value: T) =>
    () =>
      Promise.resolve(value);
  return {
    query: {
      system: { number: answer(codec(values.head)) },
      commitments: {
        lastCommitment: answer(option(values.last)),
        ...(values.stored === undefined ? {} : { rateLimit: answer(codec(values.stored)) }),
      },
    },
    consts: {
      commitments: values.constant === undefined ? {} : { rateLimit: codec(values.constant) },
    },
  } as unknown as ApiPromise;
}

describe('readCommitmentWindow on a runtime with the rate rule', () => {
  it('reads LastCommitment and the RateLimit storage value', async () => {
    const api = olderRuntime({ head: 1010, last: 1000, stored: 100, constant: 7 });
    expect(await readCommitmentWindow(api, 13, ALICE, 'rate', 1005)).toEqual({
      acceptedFrom: 1100,
      head: 1010,
      intervalBlocks: 100,
    });
  });

  it('reads the RateLimit constant of runtimes without the storage value', async () => {
    const api = olderRuntime({ head: 1010, last: 1000, constant: 100 });
    expect(await readCommitmentWindow(api, 13, ALICE, 'rate', 1005)).toEqual({
      acceptedFrom: 1100,
      head: 1010,
      intervalBlocks: 100,
    });
  });

  it('says nothing without a last commitment, a rate limit, or the space rule’s storage', async () => {
    expect(
      await readCommitmentWindow(olderRuntime({ head: 1010, constant: 100 }), 13, ALICE, 'rate', 1),
    ).toBeUndefined();
    expect(
      await readCommitmentWindow(olderRuntime({ head: 1010, last: 1000 }), 13, ALICE, 'rate', 1),
    ).toBeUndefined();
    const api = olderRuntime({ head: 1010, last: 1000, constant: 100 });
    expect(await readCommitmentWindow(api, 13, ALICE, 'space', 1005)).toBeUndefined();
  });
});

// Read before a commitment is submitted: a refused one is still included in a block.
describe(`${readWindowAhead.name}: whether the chain would refuse a commitment made now`, () => {
  const chain = useConnectedChainReplay();
  const ahead = (hotkey: string) => chain.connection.use((api) => readWindowAhead(api, 13, hotkey));

  it('names the space rule’s window when this epoch’s space leaves no room for a SHA', async () => {
    const head = chain.replay.extrinsics.head;
    chain.replay.setUsedSpace(13, ALICE, { lastEpoch: 18_982, usedSpace: 3100 });
    expect(await ahead(ALICE)).toEqual({
      rule: 'space',
      acceptedFrom: 6_852_849,
      head,
      intervalBlocks: 361,
    });
  });

  it('says nothing when there is room, the count is of an earlier epoch, or there is none', async () => {
    chain.replay.setUsedSpace(13, BOB, { lastEpoch: 18_982, usedSpace: 3000 });
    expect(await ahead(BOB)).toBeUndefined();
    chain.replay.setUsedSpace(13, BOB, { lastEpoch: 18_981, usedSpace: 3100 });
    expect(await ahead(BOB)).toBeUndefined();
    chain.replay.setUsedSpace(13, BOB, undefined);
    expect(await ahead(BOB)).toBeUndefined();
  });

  it('reads the rate rule on a runtime without the space rule’s storage', async () => {
    const api = olderRuntime({ head: 1010, last: 1000, stored: 100 });
    expect(await readWindowAhead(api, 13, ALICE)).toEqual({
      rule: 'rate',
      acceptedFrom: 1100,
      head: 1010,
      intervalBlocks: 100,
    });
    const old = olderRuntime({ head: 1100, last: 1000, stored: 100 });
    expect(await readWindowAhead(old, 13, ALICE)).toBeUndefined();
  });
});
