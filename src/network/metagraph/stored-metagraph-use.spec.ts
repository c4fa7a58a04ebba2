import { Logger } from '@nestjs/common';
import type { MinerEntity } from '../miner.entity';
import type { MinersRepository } from '../miners.repository';
import { StoredMetagraphUse } from './stored-metagraph-use';

describe(StoredMetagraphUse.name, () => {
  // A warning at every reload wrote the same line twice a minute for as long as the database
  // was away (a log audit): the first failure is said, and the first reload that works again.
  it('says the first of reloads failing in a row, another cause, and the first to work again', async () => {
    let failing: string | undefined = 'connect ECONNREFUSED';
    const repository = {
      lastMetagraph: () => Promise.resolve(undefined),
      listAll: () =>
        failing ? Promise.reject(new Error(failing)) : Promise.resolve([] as MinerEntity[]),
    } as unknown as MinersRepository;
    const logger = new Logger('MetagraphService');
    const warn = jest.spyOn(logger, 'warn').mockImplementation(() => undefined);
    const log = jest.spyOn(logger, 'log').mockImplementation(() => undefined);
    const use = new StoredMetagraphUse(null, repository, logger);

    for (let reload = 0; reload < 3; reload++) expect(await use.miners()).toBeUndefined();
    // Another cause is said too.
    failing = 'permission denied for table miners';
    expect(await use.miners()).toBeUndefined();
    failing = undefined;
    expect(await use.miners()).toEqual([]);
    expect(await use.miners()).toEqual([]);

    const kept = '(the miners in memory are kept; said again once a reload works)';
    expect(warn.mock.calls).toEqual([
      [`could not reload miners: connect ECONNREFUSED ${kept}`],
      [`could not reload miners: permission denied for table miners ${kept}`],
    ]);
    expect(log.mock.calls).toEqual([['miners reloaded again, after 4 failed reloads']]);
  });
});
