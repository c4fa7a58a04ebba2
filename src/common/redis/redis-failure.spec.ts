import MaxRetriesPerRequestError from 'ioredis/built/errors/MaxRetriesPerRequestError';
import { redisFailureText } from './redis-failure';

// ioredis' own class (its declared base, redis-errors' AbortError, has no types installed).
const Dropped = MaxRetriesPerRequestError as unknown as new (limit: number) => Error;

describe(redisFailureText.name, () => {
  it('says a command dropped with its connection in the gateway’s words, not an ioredis option’s', () => {
    expect(new Dropped(1).message).toMatch(/maxRetriesPerRequest/);
    expect(redisFailureText(new Dropped(1))).toBe(
      'connection lost: the command was dropped after one retry',
    );
  });

  it('says a database number the server does not have is a setting, not an outage', () => {
    expect(redisFailureText(new Error('ERR DB index is out of range'))).toBe(
      'ERR DB index is out of range: the server has fewer databases (its `databases` setting) ' +
        "than the number REDIS_URL's path names",
    );
  });

  it('keeps any other message as it is, a timeout’s included', () => {
    expect(redisFailureText(new Error('Command timed out'))).toBe('Command timed out');
    expect(redisFailureText(new Error('connect ECONNREFUSED 127.0.0.1:6379'))).toBe(
      'connect ECONNREFUSED 127.0.0.1:6379',
    );
  });
});
