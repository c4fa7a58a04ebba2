/**
 * The subnet 13 synapses the gateway calls, by their wire names (the path of the call and the
 * synapse's `name`). A leaf: the configuration validates MINER_CALL_BUDGETS against it.
 */
export const SYNAPSE_NAMES = [
  'GetMinerIndex',
  'GetDataEntityBucket',
  'GetContentsByBuckets',
  'OnDemandRequest',
] as const;

export type SynapseName = (typeof SYNAPSE_NAMES)[number];
