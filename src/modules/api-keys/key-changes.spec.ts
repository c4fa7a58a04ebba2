import { Logger } from '@nestjs/common';
import type { RedisConnection } from '../../common/redis/redis-connection';
import { KeyChanges } from './key-changes';
import { testConfig } from '../../../test/support/test-config';

const KEY_ID = '6f1c2b9e-0d4a-4c1e-9a53-2f7d8e6b1a40';

/** KeyChanges over a RedisConnection with a client that is `ready` or not, publishing `sent`. */
function changesWith(ready: boolean, sent: () => Promise<number> = () => Promise.resolve(1)) {
  const client = { publish: jest.fn(sent) };
  const failed = jest.fn(() => true);
  const redis = { client, ready: () => (ready ? client : null), failed };
  const changes = new KeyChanges(
    redis as unknown as RedisConnection,
    testConfig({ redisKeyPrefix: 'gateway:' }),
  );
  return { changes, client, failed };
}

describe(KeyChanges.name, () => {
  let warn: jest.SpyInstance;
  beforeEach(() => {
    warn = jest.spyOn(Logger.prototype, 'warn').mockImplementation(() => undefined);
  });
  afterEach(() => jest.restoreAllMocks());

  it('announces a change by the key id', async () => {
    const { changes, client } = changesWith(true);
    await changes.publish(KEY_ID);
    expect(client.publish).toHaveBeenCalledWith('gateway:api-key-changed', KEY_ID);
    expect(warn).not.toHaveBeenCalled();
  });

  // A deactivation while Redis rested was dropped without a word (an audit's finding).
  it('says which key change was not announced while Redis is not used', async () => {
    const { changes, client } = changesWith(false);
    await changes.publish(KEY_ID);
    expect(client.publish).not.toHaveBeenCalled();
    expect(warn.mock.calls).toEqual([
      [expect.stringMatching(new RegExp(`^change of key ${KEY_ID} not announced \\(Redis not`))],
    ]);
  });

  it('says which key change was not announced when the announcement fails', async () => {
    const { changes, failed } = changesWith(true, () =>
      Promise.reject(new Error('Command timed out')),
    );
    await changes.publish(KEY_ID);
    expect(failed).toHaveBeenCalledWith('Command timed out');
    expect(warn.mock.calls).toEqual([
      [expect.stringMatching(`change of key ${KEY_ID} not announced \\(Command timed out\\)`)],
    ]);
  });

  it('says nothing without Redis: there is no other replica to tell', async () => {
    const redis = { client: null, ready: () => null, failed: jest.fn() };
    const changes = new KeyChanges(
      redis as unknown as RedisConnection,
      testConfig({ redisKeyPrefix: 'gateway:' }),
    );
    await changes.publish(KEY_ID);
    expect(warn).not.toHaveBeenCalled();
  });
});
