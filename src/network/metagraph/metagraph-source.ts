import { MetagraphFile } from '../protocol';

/**
 * Where the metagraph comes from. Today a JSON file (FileMetagraphSource); a chain-backed source
 * can be added behind the same interface.
 */
export interface MetagraphSource {
  /** Human-readable origin, for logs. */
  readonly description: string;
  read(): Promise<MetagraphFile>;
  /** Calls `onChange` whenever the metagraph may have changed; returns a function that stops. */
  watch(onChange: () => void): () => void;
}

export const METAGRAPH_SOURCE = Symbol('METAGRAPH_SOURCE');
