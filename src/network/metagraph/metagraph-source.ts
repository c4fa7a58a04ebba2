import { MetagraphFile } from '../protocol';
import { MetagraphNetwork } from '../miners.repository';
import type { ChainIdentity } from '../chain/subtensor-connection';

/** Where the metagraph comes from: a JSON file (FileMetagraphSource) or a subtensor node. */
export interface MetagraphSource {
  /** Human-readable origin, for logs and system-status. */
  readonly description: string;
  /** The chain a subtensor source's connection reached (undefined before any, and for files). */
  readonly chain?: ChainIdentity;
  /** What kind of network the source describes (a file written by the devnet says `devnet`). */
  networkOf(metagraph: MetagraphFile): MetagraphNetwork;
  read(): Promise<MetagraphFile>;
  /**
   * Calls `sync` whenever the metagraph may have changed, one call at a time (each awaited);
   * returns a function that stops.
   */
  watch(sync: () => Promise<void>): () => void;
  /** Releases what the source holds open (a node connection). */
  close?(): Promise<void>;
}

export const METAGRAPH_SOURCE = Symbol('METAGRAPH_SOURCE');
