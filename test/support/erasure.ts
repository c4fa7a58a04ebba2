import { createHash } from 'node:crypto';
import { readFileSync, statSync } from 'node:fs';
import { gunzipSync } from 'node:zlib';
import { DataSource } from 'typeorm';
import { Clock } from '../../src/common/clock/clock';
import { runEraseAuthorCommand } from '../../src/modules/erasure/erase-author-command';
import { parquetPathBeside } from '../../src/modules/tasks/dataset-parquet';
import { DatasetParquetService } from '../../src/modules/tasks/dataset-parquet.service';
import { datasetPath } from '../../src/modules/tasks/dataset-path';
import { manifestPathOf } from '../../src/modules/tasks/dataset-writer';
import { CompletedTask } from '../../src/modules/tasks/task.types';
import { TaskLifecycleRepository } from '../../src/modules/tasks/task-lifecycle.repository';
import { timeBucketId } from '../../src/network/protocol';
import { ItemStoreRepository } from '../../src/network/stored/item-store.repository';
import { compileFixture, insertExpiredTask, lifecycleReplica } from './expired-tasks';
import { redditComment } from './items';
import { testConfig } from './test-config';

/** What an erasure command printed, and its exit status. */
export interface CommandRun {
  status: number;
  stdout: string[];
  stderr: string[];
}

/**
 * Runs the erasure command's function on `database`'s URL and DATA_DIR `dataDir`, with the
 * settings `env` besides (REDIS_URL).
 */
export async function eraseAuthor(
  database: DataSource,
  dataDir: string,
  args: string[],
  env: Record<string, string> = {},
): Promise<CommandRun> {
  const stdout: string[] = [];
  const stderr: string[] = [];
  const url = (database.options as { url: string }).url;
  const status = await runEraseAuthorCommand(
    args,
    { DATABASE_URL: url, DATA_DIR: dataDir, MINER_ALLOWED_NETWORKS: '127.0.0.0/8', ...env },
    { stdout: (line) => stdout.push(line), stderr: (line) => stderr.push(line) },
  );
  return { status, stdout, stderr };
}

/**
 * Gives the author `username` (spelled as a record may: `@Erin `) the task's items `uris`, with
 * a body no output may quote (`SECRET-POST-…`).
 */
export async function giveItemsTo(
  database: DataSource,
  taskId: string,
  username: string,
  uris: string[],
): Promise<void> {
  await database.query(
    `UPDATE task_items SET item = item || jsonb_build_object('username', $3::text,
       'body', 'SECRET-POST-' || uri, 'content', 'SECRET-POST-' || uri)
     WHERE task_id = $1 AND uri = ANY($2::text[])`,
    [taskId, uris, username],
  );
}

/** Stores one Reddit comment of each of `usernames` in the item store, fetched from a miner. */
export async function storeComments(database: DataSource, usernames: string[]): Promise<void> {
  const datetime = new Date(Date.now() - 3_600_000).toISOString();
  const items = usernames.map((username, n) => {
    const uri = `https://www.reddit.com/r/bitcoin/comments/abc/title/stored${n}/`;
    const item = redditComment({ uri, url: uri, id: `t1_stored${n}`, username, datetime });
    return { item, timeBucket: timeBucketId(new Date(datetime)), contentBytes: 200 };
  });
  await new ItemStoreRepository(database).save({
    bucket: { source: 1, label: 'r/bitcoin', timeBucket: timeBucketId(new Date(datetime)) },
    minerUid: 1,
    minerHotkey: 'hotkey-1',
    fetchedAt: new Date(),
    claimedBytes: 1000,
    items,
  });
}

/** A file's SHA-256 and modification time: what "left as it is" compares. */
export function fileState(file: string): { sha256: string; mtimeMs: number } {
  const sha256 = createHash('sha256').update(readFileSync(file)).digest('hex');
  return { sha256, mtimeMs: statSync(file).mtimeMs };
}

/**
 * Makes every commit that changed a row of `scraping_tasks` fail, at COMMIT (a deferred
 * constraint trigger): a commit lost after the work before it ran, as a dropped connection, an
 * idle-in-transaction timeout or a kill loses it. The returned function drops the trigger.
 */
export async function loseTaskCommits(database: DataSource): Promise<() => Promise<void>> {
  await database.query(
    `CREATE FUNCTION lose_task_commit() RETURNS trigger LANGUAGE plpgsql AS $$
     BEGIN RAISE EXCEPTION 'commit lost'; END $$`,
  );
  await database.query(
    `CREATE CONSTRAINT TRIGGER lose_task_commit AFTER UPDATE ON scraping_tasks
     DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION lose_task_commit()`,
  );
  return async () => {
    await database.query('DROP TRIGGER IF EXISTS lose_task_commit ON scraping_tasks');
    await database.query('DROP FUNCTION IF EXISTS lose_task_commit()');
  };
}

/** A stream's bytes, read to its end. */
export async function bytesOf(stream: NodeJS.ReadableStream): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

/** When the erasure specs' tasks expire: their items are the minutes before. */
export const T0 = Date.parse('2026-11-20T00:00:00Z');

/** The uri of comment `n` of task `task`. */
export const uriOf = (task: string, n: number) =>
  `https://www.reddit.com/r/bitcoin/comments/abc/title/${task}${n}/`;

/**
 * An erasure spec's setup (compileFixture: a database of its own, a DATA_DIR per test) with what
 * its tests share: completed tasks holding an author's rows, their files and rows, and the
 * command run on them.
 */
export function erasureFixture(own: string) {
  const fixture = compileFixture(own);
  const now = () => new Date(T0 + 60_000);
  // The register too: a test's erasure of erin keeps her out of the next test's stored items.
  afterEach(() =>
    fixture.database.query('TRUNCATE stored_items, stored_bucket_fetches, erased_authors'),
  );

  const task = async (id: string) =>
    (
      await fixture.database.query<CompletedTask[]>('SELECT * FROM scraping_tasks WHERE id = $1', [
        id,
      ])
    )[0];
  const count = async (sql: string) =>
    (await fixture.database.query<{ count: number }[]>(sql))[0].count;
  const erase = (source: string, username: string, ...more: string[]) =>
    eraseAuthor(fixture.database, fixture.dataDir, [
      ...more,
      '--source',
      source,
      '--username',
      username,
    ]);
  return {
    fixture,
    now,
    task,
    count,
    erase,
    /** Runs the command for Reddit's `erin`, with the options `more`. */
    eraseErin: (...more: string[]) => erase('reddit', 'erin', ...more),
    /** Completes task `id`: four comments of dave's, those numbered `erins` given to `name`. */
    async compiledTask(id: string, erins: number[], name = '@Erin '): Promise<CompletedTask> {
      await insertExpiredTask(fixture.database, id, T0, 4, 60_000);
      await giveItemsTo(
        fixture.database,
        id,
        name,
        erins.map((n) => uriOf(id, n)),
      );
      expect(
        await lifecycleReplica(fixture.database, fixture.dataDir, now).service.compileExpired(),
      ).toBe(1);
      return task(id);
    },
    /** The rows of task `id`'s JSON lines file. */
    lines: (id: string) =>
      gunzipSync(readFileSync(datasetPath(fixture.dataDir, id)))
        .toString('utf8')
        .trim()
        .split('\n')
        .map((line) => JSON.parse(line) as { username: string; uri: string }),
    /** Task `id`'s three files: JSON lines, manifest, Parquet. */
    filesOf: (id: string) => {
      const path = datasetPath(fixture.dataDir, id);
      return [path, manifestPathOf(path), parquetPathBeside(path)];
    },
    erinsItems: () =>
      count(`SELECT count(*)::int AS count FROM task_items WHERE item->>'username' = '@Erin '`),
    erinsStored: () =>
      count(`SELECT count(*)::int AS count FROM stored_items WHERE username = 'erin'`),
    /** A Parquet conversion of this DATA_DIR, on the specs' clock. */
    parquetService: () =>
      new DatasetParquetService(
        new TaskLifecycleRepository(fixture.database),
        { now } as Clock,
        testConfig({ dataDir: fixture.dataDir }),
      ),
  };
}
