// What @polkadot/api is told about subtensor when a connection opens (ApiPromise.create's
// signedExtensions and rpc): knowledge of the chain's runtime and of the client's logging, kept
// apart from the connection's lifecycle (subtensor-connection.ts), which only passes it on.

/**
 * Subtensor's two transaction extensions carry no data: declared, so the client neither warns
 * about them nor mis-encodes extrinsics that include them.
 */
export const SUBTENSOR_EXTENSIONS = {
  SubtensorTransactionExtension: { extrinsic: {}, payload: {} },
  DrandPriority: { extrinsic: {}, payload: {} },
};

/**
 * `state_call` (every runtime API call) with the client's own error line switched off: it would
 * log `RPC-CORE: call(…): Bytes:: 1002: …` as an error (polkadot-console.ts) for every refusal
 * the metagraph reader expects. The error still rejects the call: the caller logs it (a refusal
 * the metagraph reader handles is a warning).
 */
export const QUIET_RPC = {
  state: {
    // @polkadot/types' own definition of state_call (interfaces/state/rpc), plus noErrorLog.
    call: {
      alias: ['state_callAt'],
      description: 'Perform a call to a builtin on the chain',
      params: [
        { name: 'method', type: 'Text' },
        { name: 'data', type: 'Bytes' },
        { isHistoric: true, isOptional: true, name: 'at', type: 'BlockHash' },
      ],
      type: 'Bytes',
      noErrorLog: true,
    },
  },
};
