import { createHash } from 'node:crypto';
import { readFileSync, statSync } from 'node:fs';
import { DataSource } from 'typeorm';
import { runEraseAuthorCommand } from '../../src/modules/erasure/erase-author-command';
import { timeBucketId } from '../../src/network/protocol';
import { ItemStoreRepository } from '../../src/network/stored/item-store.repository';
import { redditComment } from './items';

/** What an erasure command printed, and its exit status. */
export interface CommandRun {
  status: number;
  stdout: string[];
  stderr: string[];
}

/** Runs the erasure command's function on `database`'s URL and DATA_DIR `dataDir`. */
export async function eraseAuthor(
  database: DataSource,
  dataDir: string,
  args: string[],
): Promise<CommandRun> {
  const stdout: string[] = [];
  const stderr: string[] = [];
  const url = (database.options as { url: string }).url;
  const status = await runEraseAuthorCommand(
    args,
    { DATABASE_URL: url, DATA_DIR: dataDir, MINER_ALLOWED_NETWORKS: '127.0.0.0/8' },
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

/** Runs the erasure command for Reddit's `erin` on `database` and DATA_DIR `dataDir`. */
export function eraseErin(database: DataSource, dataDir: string, more: string[] = []) {
  return eraseAuthor(database, dataDir, ['--source', 'reddit', '--username', 'erin', ...more]);
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
