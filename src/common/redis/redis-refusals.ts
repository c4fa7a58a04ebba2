import Redis, { ReplyError } from 'ioredis';

/**
 * Each kind of command the service sends Redis, as it sends it: the rate limiter's script over
 * the keys of several API keys at once, each in a hash slot of its own; the transaction that
 * reads a master-key request's counts; a message on the channels of key changes and replicas'
 * database numbers.
 */
const PROBES: readonly {
  what: string;
  run: (client: Redis, keyPrefix: string) => Promise<unknown>;
}[] = [
  {
    what: 'a script writing keys of two hash slots (EVAL, as the rate limiter sends it)',
    run: (client) =>
      client.eval(
        "redis.call('set', KEYS[1], '1', 'PX', 5000); redis.call('set', KEYS[2], '1', 'PX', 5000); " +
          "redis.call('del', KEYS[1], KEYS[2]); return 1",
        2,
        'usable:{a}',
        'usable:{b}',
      ),
  },
  {
    what: "a transaction (MULTI/EXEC, as a master key's request reads its counts)",
    run: (client) => client.multi().pttl('usable:{a}').exec(),
  },
  {
    what: 'a message on a channel (PUBLISH, as key changes are announced)',
    // ioredis' keyPrefix is for keys: the service prefixes its channels itself.
    run: (client, keyPrefix) => client.publish(`${keyPrefix}usable`, ''),
  },
];

/**
 * Redis' refusal for memory: the error itself (`OOM …`), or, from a script before Redis 7, quoted
 * in the script's error (`ERR Error running script … -OOM …`).
 */
export const OUT_OF_MEMORY = /(?:^|-)OOM\b/;

/**
 * Whether Redis answered a command with a refusal for memory, which passes once keys expire: the
 * error, or, for a transaction whose queued command was refused so, the EXECABORT with the OOM
 * among ioredis' `previousErrors`.
 */
export function refusedForMemory(error: unknown): boolean {
  if (!(error instanceof ReplyError)) return false;
  const { message, previousErrors } = error as Error & { previousErrors?: Error[] };
  return [message, ...(previousErrors ?? []).map((cause) => cause.message)].some((cause) =>
    OUT_OF_MEMORY.test(cause),
  );
}

/**
 * What Redis refuses of what the service will ask of it, said in one line; undefined when it
 * refuses nothing, or when it does not answer (an outage, which the service rides out).
 * Each refusal found here was permanent and silent: every command of that kind failed, Redis was
 * left alone for 2 s and tried again, and meanwhile the limits were counted in each replica's
 * memory (a hosted-Redis audit): a cluster-mode server (CROSSSLOT, MOVED), a read-only replica
 * (READONLY), an ACL user without scripting, transactions or the channels (NOPERM). A server
 * whose memory is full (OOM) is not refused: that passes once keys expire.
 */
export async function redisRefusal(client: Redis, keyPrefix: string): Promise<string | undefined> {
  for (const probe of PROBES) {
    try {
      await probe.run(client, keyPrefix);
    } catch (error) {
      // Only an answer is a refusal: a timeout or a dropped connection is an outage.
      if (!(error instanceof ReplyError)) return undefined;
      if (refusedForMemory(error)) continue;
      return `${probe.what} was refused: ${(error as Error).message}`;
    }
  }
  return undefined;
}
