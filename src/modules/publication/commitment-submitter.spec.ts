import { CommitmentRateLimitedError, CommitmentSubmitter } from './commitment-submitter';

const SHA = '3f786850e387550fdab836ed7e6dc881de23001b';

/**
 * A submitter whose node includes the commitment in a block with the Commitments pallet's error
 * `name` (the recorded runtime knows only one of the two waiting errors, so the e2e spec meets
 * only that one).
 */
function refusedWith(name: string) {
  const api = {
    on: () => undefined,
    off: () => undefined,
    registry: {
      findMetaError: () => ({ section: 'commitments', name, docs: [] }),
    },
    tx: {
      commitments: {
        setCommitment: () => ({
          signAndSend: (
            _address: string,
            _options: unknown,
            onStatus: (result: unknown) => void,
          ) => {
            onStatus({
              status: { isInBlock: true, asInBlock: { toHex: () => '0x01' } },
              dispatchError: { isModule: true, asModule: {} },
            });
            return Promise.resolve(() => undefined);
          },
        }),
      },
    },
  };
  const connection = {
    useLong: (work: (api: unknown) => Promise<unknown>) => work(api),
  };
  return new CommitmentSubmitter(connection as never, { address: '5F' } as never, 13).commit(SHA);
}

describe(CommitmentSubmitter.name, () => {
  // The chain's rate limit asks to wait: the worker keeps the vote pushed and retries it later.
  it.each(['CommitmentSetRateLimitExceeded', 'SpaceLimitExceeded'])(
    'takes %s as the chain asking to wait',
    async (name) => {
      await expect(refusedWith(name)).rejects.toBeInstanceOf(CommitmentRateLimitedError);
    },
  );

  it('takes any other refusal as a failure', async () => {
    await expect(refusedWith('TooManyFieldsInCommitmentInfo')).rejects.toThrow(
      'the chain refused the commitment: commitments.TooManyFieldsInCommitmentInfo',
    );
  });
});
