/**
 * Default cap of a GetMinerIndex answer: the largest honest index, 350,000 buckets each under a
 * label of its own of 140 characters, is 214 bytes a bucket nested in the answer, 74.9 MB
 * (docs/miner-protocol.md, "Answer sizes"); 96 MiB leaves room for spaced JSON and the envelope.
 * A module of its own, without decorators: the devnet's oversize fault reads it too.
 */
export const DEFAULT_MINER_MAX_INDEX_RESPONSE_BYTES = 96 * 1024 * 1024;
