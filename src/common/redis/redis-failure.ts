/**
 * What the log says of a failed Redis command: ioredis' message, but for the error ioredis gives a
 * command it dropped when its connection was lost. That one reads "Reached the max retries per
 * request limit (which is 1). Refer to "maxRetriesPerRequest" option for details.", the limit
 * RedisConnection sets, which sent an operator looking for an option no variable sets (an
 * operator audit). A command timeout keeps its words: RedisConnection.failed tells it apart by
 * them.
 */
export function redisFailureText(error: Error): string {
  if (error.name === 'MaxRetriesPerRequestError')
    return 'connection lost: the command was dropped after one retry';
  // A setting, not an outage (a configuration audit).
  if (error.message.includes('DB index is out of range'))
    return (
      `${error.message}: the server has fewer databases (its \`databases\` setting) than ` +
      "the number REDIS_URL's path names"
    );
  return error.message;
}
