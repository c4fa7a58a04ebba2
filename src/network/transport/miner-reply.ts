import { WrongAnswerError } from '../sn13/messages';

/*
 * What a miner call is sent to and what comes back (MinerClient.call).
 */

export interface MinerTarget {
  uid: number;
  hotkey: string;
  /** `http://host:port` as the metagraph lists it. */
  axonUrl: string;
}

/** A call's target from the metagraph's entry of a miner (its other fields left behind). */
export function targetOf(miner: MinerTarget): MinerTarget {
  return { uid: miner.uid, hotkey: miner.hotkey, axonUrl: miner.axonUrl };
}

export interface MinerReply {
  body: unknown;
  latencyMs: number;
  /**
   * The body read by one of sn13/messages.ts' readers. A body of the wrong shape (the reader's
   * WrongAnswerError) is a failed call like the others in /metrics (`wrong_schema`), though the
   * call itself answered; the error is rethrown for the caller.
   */
  read<T>(reader: (body: unknown) => T): T;
}

/** A reply whose `read` calls `onWrongAnswer` when the reader finds the body of the wrong shape. */
export function replyOf(
  body: unknown,
  latencyMs: number,
  onWrongAnswer: () => void = () => undefined,
): MinerReply {
  return {
    body,
    latencyMs,
    read(reader) {
      try {
        return reader(body);
      } catch (error) {
        if (error instanceof WrongAnswerError) onWrongAnswer();
        throw error;
      }
    },
  };
}

/**
 * An answer read as it arrives instead of whole: for one larger than an answer held whole may
 * be (a spot check of a large bucket, BucketReader).
 */
export interface AnswerStream {
  /** The most bytes the answer may carry: past them the call fails `oversize`. */
  maxBytes: number;
  /** Reads the answer's chunks; an UnreadableJsonError it throws fails the call `malformed`. */
  read(chunks: AsyncIterable<Buffer>): Promise<unknown>;
}
