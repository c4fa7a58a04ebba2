/**
 * How long ItemStore.find takes on an item store at benchmark size, in the repository, one call
 * at a time (the latency of one store hit, not throughput; bench:on-demand --stored measures
 * the same over HTTP): a throwaway database seeded with `seedItemStore` (10 M items over 30
 * days by default), measured, dropped. Beside the hot label's page, for context, the other
 * shapes of query on the same store: its next page, a cold label, any label, one author.
 * Run: npm run bench:item-store [-- --items 10000000 --requests 2000]
 */
import { performance } from 'node:perf_hooks';
import { DataSource } from 'typeorm';
import { buildDataSourceOptions } from '../src/database/data-source-options';
import { runMigrations } from '../src/database/migrate';
import { ItemStore, StoredItemQuery } from '../src/network/stored/item-store';
import { ItemStoreRepository } from '../src/network/stored/item-store.repository';
import { cleanupOnExit } from './support/cleanup';
import { acquireDatabase } from './support/database';
import { benchFlags } from './support/flags';
import { seedItemStore, seedMiners } from './support/item-store-seed';
import { numberSetting, percentile, settingText } from './support/measure';
import { commandLine, formatInt, machineLine, progress, table } from './support/report';

const DAY_MS = 86_400_000;

interface StoreFindTimes {
  name: string;
  requests: number;
  p50: number;
  p99: number;
  max: number;
  /** Mean items per answer: an empty answer would be a fast answer to the wrong question. */
  items: number;
}

/**
 * Times `find` on the seeded store, one request at a time (the latency of one store hit, not
 * throughput): a hot label over the last 24 h, limit 100, newest first, its window ending at a
 * random minute of the last hour so that requests do not all read the same rows; and beside it,
 * for context, the next page of that query, a cold label over 30 days, any label, an author.
 */
async function timeStoreFinds(
  store: ItemStore,
  options: { now: Date; requests?: number; warmup?: number },
): Promise<StoreFindTimes[]> {
  const requests = options.requests ?? 2000;
  const now = options.now.getTime();
  const window = (random: number) => {
    const to = new Date(now - Math.floor(random * 60) * 60_000);
    return { to, from: new Date(to.getTime() - DAY_MS) };
  };
  const base = { source: 2 as const, usernames: [], limit: 100 };
  const kinds: { name: string; query: (random: number) => Promise<StoredItemQuery> }[] = [
    {
      name: 'hot label #bitcoin, last 24 h, limit 100',
      query: (random) => Promise.resolve({ ...base, labels: ['#bitcoin'], ...window(random) }),
    },
    {
      name: '  its second page (before the first page)',
      query: async (random) => {
        const query = { ...base, labels: ['#bitcoin'], ...window(random) };
        const page = await store.find(query);
        const last = page[page.length - 1]?.item;
        return { ...query, before: last && { datetime: new Date(last.datetime), uri: last.uri } };
      },
    },
    {
      name: 'cold label, 30 days, limit 100',
      query: (random) =>
        Promise.resolve({
          ...base,
          labels: [`#tag${500 + Math.floor(random * 1000)}`],
          from: null,
          to: new Date(now),
        }),
    },
    {
      name: 'any label, last 24 h, limit 100',
      query: (random) => Promise.resolve({ ...base, ...window(random) }),
    },
    {
      name: 'one author, 30 days, limit 100',
      query: (random) =>
        Promise.resolve({
          ...base,
          usernames: [`user${1 + Math.floor(random * 50)}`],
          from: null,
          to: new Date(now),
        }),
    },
  ];
  const results: StoreFindTimes[] = [];
  for (const kind of kinds) {
    const times: number[] = [];
    let items = 0;
    const warmup = options.warmup ?? 100;
    for (let index = 0; index < warmup + requests; index++) {
      const query = await kind.query(Math.random());
      const started = performance.now();
      const found = await store.find(query);
      const elapsed = performance.now() - started;
      if (index < warmup) continue;
      times.push(elapsed);
      items += found.length;
    }
    results.push({
      name: kind.name,
      requests,
      p50: percentile(times, 0.5),
      p99: percentile(times, 0.99),
      max: Math.max(...times),
      items: items / requests,
    });
  }
  return results;
}

/** Seeds a throwaway database, measures, prints, drops it. */
async function main(): Promise<void> {
  const { values } = benchFlags({
    options: { items: { type: 'string' }, requests: { type: 'string' } },
  });
  const items = numberSetting(settingText('items', values.items), 10_000_000, true);
  const requests = numberSetting(settingText('requests', values.requests), 2000, true);
  const cleanup = cleanupOnExit();
  const database = await acquireDatabase('bench_item_store');
  cleanup.push(() => database.release());
  if (database.persistent)
    throw new Error('the seed needs a throwaway database: unset DATABASE_URL');
  const dataSource = new DataSource({
    ...buildDataSourceOptions(database.url, { poolSize: 4, statementTimeoutMs: 0 }),
  });
  cleanup.push(async () => {
    if (dataSource.isInitialized) await dataSource.destroy();
  });
  try {
    await dataSource.initialize();
    await runMigrations(dataSource);
    const now = new Date();
    progress(`seeding ${formatInt(items)} items into ${database.description}`);
    await seedMiners(dataSource);
    const seeded = await seedItemStore(dataSource, { items, now });
    const [{ size }] = await dataSource.query<{ size: string }[]>(
      `SELECT pg_size_pretty(sum(pg_total_relation_size(inhrelid))) AS size
       FROM pg_inherits WHERE inhparent = 'stored_items'::regclass`,
    );
    const times = await timeStoreFinds(new ItemStoreRepository(dataSource), { now, requests });
    const ms = (value: number) => value.toFixed(2);
    console.log(`${commandLine()}\n${machineLine()}\n`);
    console.log(
      `Seeded ${formatInt(seeded.items)} items in ${seeded.partitions} daily partitions ` +
        `(${size} with indexes) in ${seeded.seconds.toFixed(0)} s\n`,
    );
    console.log(
      table([
        [
          'ItemStore.find (repository, one at a time)',
          'requests',
          'p50 ms',
          'p99 ms',
          'max ms',
          'items',
        ],
        ...times.map((row) => [
          row.name,
          String(row.requests),
          ms(row.p50),
          ms(row.p99),
          ms(row.max),
          row.items.toFixed(0),
        ]),
      ]),
    );
  } finally {
    await cleanup.run();
  }
}

if (require.main === module) {
  main().catch((error: unknown) => {
    console.error(error);
    process.exitCode = 1;
  });
}
