import { existsSync, readFileSync, statSync } from 'node:fs';
import { createHash } from 'node:crypto';
import { copyFile } from 'node:fs/promises';
import { join } from 'node:path';
import { Clock } from '../../src/common/clock/clock';
import { DatasetDownloadService } from '../../src/modules/tasks/dataset-download.service';
import { parquetPathBeside } from '../../src/modules/tasks/dataset-parquet';
import { datasetPath, datasetsDirectory } from '../../src/modules/tasks/dataset-path';
import { DatasetManifest, manifestPathOf } from '../../src/modules/tasks/dataset-writer';
import { TasksService } from '../../src/modules/tasks/tasks.service';
import { DatasetErasure, ERASURE_LOCK_TIMEOUT_MS } from '../../src/modules/tasks/dataset-erasure';
import { DatasetRecordsRepository } from '../../src/modules/tasks/dataset-records.repository';
import { AuthorErasure } from '../../src/modules/erasure/author-erasure';
import { AuthorItemsRepository } from '../../src/modules/erasure/author-items.repository';
import { erasedAuthor, isAuthorOf } from '../../src/modules/erasure/erased-author';
import { Source } from '../../src/common/source';
import { insertExpiredTask } from '../support/expired-tasks';
import {
  bytesOf,
  erasureFixture,
  fileState,
  giveItemsTo,
  storeComments,
  T0,
  uriOf,
} from '../support/erasure';
import { readParquet } from '../support/parquet-reader';
import { testConfig } from '../support/test-config';

/**
 * `npm run erase-author` (an erasure request) on real Postgres and real dataset files: the
 * author's rows out of the tables, a completed dataset holding them and its set-aside copies;
 * every other dataset left byte for byte. What the command says of itself (a dry run, exit
 * statuses, arguments): author-erasure-command.medium-spec.ts; a lost commit:
 * author-erasure-recovery.medium-spec.ts.
 */
describe('Erasing an author', () => {
  const {
    fixture,
    now,
    task,
    count,
    erase,
    eraseErin,
    compiledTask,
    lines,
    filesOf,
    erinsItems,
    erinsStored,
    parquetService,
  } = erasureFixture('authorerasure');

  it("takes the author's rows out of the tables, the dataset, its manifest and record, and leaves other datasets as they are", async () => {
    const mixed = await compiledTask('mixed', [1, 3]);
    const other = await compiledTask('other', []);
    const untouched = filesOf('other').map(fileState);
    await storeComments(fixture.database, ['Erin', 'dave']);
    expect(existsSync(parquetPathBeside(datasetPath(fixture.dataDir, 'mixed')))).toBe(true);

    const run = await erase('Reddit', ' @ERIN ');

    expect(run.status).toBe(0);
    expect(run.stderr).toEqual([]);
    expect(run.stdout).toEqual(
      expect.arrayContaining([
        'stored_items: 1 row removed',
        'task_items: 2 rows removed (tasks: mixed)',
        expect.stringMatching(
          /^datasets: 1 rewritten, 2 rows removed \(tasks: mixed -2\); .*; 1 REDDIT dataset holding none/,
        ),
      ]),
    );
    // Never a post: the output goes to terminals and tickets.
    expect(run.stdout.join('\n')).not.toContain('SECRET-POST');
    expect(await erinsStored()).toBe(0);
    expect(
      await count(`SELECT count(*)::int AS count FROM stored_items WHERE username = 'dave'`),
    ).toBe(1);
    expect(await erinsItems()).toBe(0);

    // The JSON lines without them, the others in their order and as they were.
    const kept = lines('mixed');
    expect(kept.map((row) => row.uri)).toEqual([uriOf('mixed', 2), uriOf('mixed', 0)]);
    expect(kept.every((row) => row.username === 'dave')).toBe(true);
    const path = datasetPath(fixture.dataDir, 'mixed');
    const sha256 = createHash('sha256').update(readFileSync(path)).digest('hex');
    const recorded = await task('mixed');
    expect(recorded).toMatchObject({
      state: 'completed',
      completed_at: mixed.completed_at,
      dataset_rows: 2,
      dataset_bytes: String(statSync(path).size),
      dataset_sha256: sha256,
      parquet_file: null,
      parquet_sha256: null,
      // Kept: the next Parquet file's Last-Modified comes after the old one's.
      parquet_written_at: mixed.parquet_written_at,
    });
    expect(recorded.dataset_sha256).not.toBe(mixed.dataset_sha256);
    const manifest = JSON.parse(readFileSync(manifestPathOf(path), 'utf8')) as DatasetManifest;
    expect(manifest).toMatchObject({ rows: 2, bytes: statSync(path).size, sha256, parquet: null });
    expect(existsSync(parquetPathBeside(path))).toBe(false);

    // The dataset without the author is read, never written.
    expect(filesOf('other').map(fileState)).toEqual(untouched);
    expect(await task('other')).toEqual(other);

    // The Parquet file made at the next download holds the new rows only (DuckDB reads it).
    const parquet = await parquetService().ensure(recorded);
    const read = await readParquet(parquet!.file);
    expect(read.rows.map((row) => row.username)).toEqual(['dave', 'dave']);
    expect((await task('mixed')).parquet_sha256).toBe(parquet!.sha256);
  });

  it('serves a download opened before the rewrite the old bytes whole, and one after the new file and hash', async () => {
    const before = await compiledTask('mixed', [0]);
    const download = new DatasetDownloadService(
      { find: (id: string) => task(id) } as unknown as TasksService,
      parquetService(),
      { now } as Clock,
      testConfig({ dataDir: fixture.dataDir }),
    );
    const opened = await download.open('mixed', 'jsonl');
    expect((await eraseErin()).status).toBe(0);

    if (opened.status !== 200) throw new Error('not opened');
    const old = await bytesOf(opened.file.getStream());
    expect(createHash('sha256').update(old).digest('hex')).toBe(before.dataset_sha256);

    const after = await download.open('mixed', 'jsonl');
    if (after.status !== 200) throw new Error('not opened');
    const fresh = await bytesOf(after.file.getStream());
    expect(after.sha256).toBe((await task('mixed')).dataset_sha256);
    expect(createHash('sha256').update(fresh).digest('hex')).toBe(after.sha256);
  });

  // A conversion that read the task before the rewrite: its Parquet file, of the old rows or
  // of the new file under the old count, is neither renamed into place nor recorded.
  it('records no Parquet file of a conversion that read the task before the rewrite', async () => {
    const before = await compiledTask('mixed', [2]);
    expect((await eraseErin()).status).toBe(0);
    const service = parquetService();

    expect(await service.ensure(before)).toBeNull();
    expect(existsSync(parquetPathBeside(datasetPath(fixture.dataDir, 'mixed')))).toBe(false);
    expect((await task('mixed')).parquet_file).toBeNull();
    // Not a failure that stands for the hour: the task as recorded now converts at once.
    const parquet = await service.ensure(await task('mixed'));
    expect((await readParquet(parquet!.file)).rows).toHaveLength(3);
  });

  it("removes the set-aside copies holding the author's rows with their manifest and Parquet copies, and leaves the others", async () => {
    await compiledTask('mixed', [0]);
    await compiledTask('other', []);
    const directory = datasetsDirectory(fixture.dataDir);
    const aside = (file: string, random: string) =>
      copyFile(file, `${file}.replaced-20261119T000000Z-${random}`);
    for (const file of filesOf('mixed')) await aside(file, '0000000a');
    for (const file of filesOf('other')) await aside(file, '0000000b');
    const otherCopies = filesOf('other').map(
      (file) => `${file}.replaced-20261119T000000Z-0000000b`,
    );
    const kept = otherCopies.map(fileState);

    const run = await eraseErin();

    expect(run.status).toBe(0);
    expect(run.stdout).toContain(
      "set-aside copies (….replaced-*): 1 holding the author's rows removed, with their manifest and Parquet copies " +
        '(mixed.jsonl.gz.replaced-20261119T000000Z-0000000a, mixed.jsonl.gz.manifest.json.replaced-20261119T000000Z-0000000a, mixed.parquet.replaced-20261119T000000Z-0000000a)',
    );
    for (const file of filesOf('mixed'))
      expect(existsSync(`${file}.replaced-20261119T000000Z-0000000a`)).toBe(false);
    expect(otherCopies.map(fileState)).toEqual(kept);
    expect(existsSync(join(directory, 'other.jsonl.gz'))).toBe(true);
  });

  it('removes set-aside copies named without a random part, as releases of 2026-12-06 named them', async () => {
    await compiledTask('mixed', [0]);
    const copies = filesOf('mixed').map((file) => `${file}.replaced-20261206T000000Z`);
    for (const [n, file] of filesOf('mixed').entries()) await copyFile(file, copies[n]);

    const run = await eraseErin();

    expect(run.status).toBe(0);
    expect(run.stdout).toContainEqual(
      expect.stringMatching(
        /^set-aside copies \(….replaced-\*\): 1 holding the author's rows removed/,
      ),
    );
    expect(copies.filter((file) => existsSync(file))).toEqual([]);
  });

  // An X handle lives under the item's `user`.
  it("deletes an X author's collected items however their records spell the handle, and no one else's", async () => {
    await fixture.database.query(
      `INSERT INTO scraping_tasks (id, platform, label, state, registered_by, registered_at, expires_at)
       VALUES ('x-task', 'x', '#ai', 'active', '5Hotkey', $1, $1::timestamptz + interval '7 days')`,
      [new Date(T0).toISOString()],
    );
    const handles = ['@SomeHandle', ' somehandle ', 'somehandle2', 'someone'];
    for (const [n, username] of handles.entries())
      await fixture.database.query(
        `INSERT INTO task_items (task_id, uri, datetime, item, collected_at)
         VALUES ('x-task', $1, $2, $3, $2)`,
        [
          `https://x.com/h/status/${n + 1}`,
          new Date(T0).toISOString(),
          JSON.stringify({ source: 'X', user: { username } }),
        ],
      );

    const run = await erase('x', '@SOMEHANDLE');

    expect(run.status).toBe(0);
    expect(run.stdout).toContain('task_items: 2 rows removed (tasks: x-task)');
    const left = await fixture.database.query<{ username: string }[]>(
      `SELECT item->'user'->>'username' AS username FROM task_items WHERE task_id = 'x-task' ORDER BY uri`,
    );
    expect(left.map((row) => row.username)).toEqual(['somehandle2', 'someone']);
  });

  // A compile that read the author's items before they were deleted, completed during the first
  // pass: the second pass finds its dataset.
  it('takes the rows out of a dataset completed between its two passes', async () => {
    class CompletedBetweenPasses extends DatasetRecordsRepository {
      override async compilingTasks(platform: Source): Promise<string[]> {
        await compiledTask('late', [1, 2]);
        return super.compilingTasks(platform);
      }
    }
    const erasure = new AuthorErasure(
      new AuthorItemsRepository(fixture.database),
      new DatasetErasure(new CompletedBetweenPasses(fixture.database), fixture.dataDir),
      fixture.dataDir,
    );

    const report = await erasure.erase(erasedAuthor('reddit', 'erin'), false);

    expect(report.datasets).toEqual([
      { taskId: 'late', outcome: 'rewritten', removed: 2, rows: 2 },
    ]);
    expect(lines('late').map((row) => row.username)).toEqual(['dave', 'dave']);
  });

  // One rule for who the author is, the service's (authorKey): a tab or a no-break space around
  // the name is erin's in the item store, and was kept in the datasets and the tasks' items.
  it('takes out every row the service itself reads as the author, and no other', async () => {
    await compiledTask('tabbed', [0, 3], '\tErin');
    await insertExpiredTask(fixture.database, 'open', T0, 3, 60_000);
    await giveItemsTo(fixture.database, 'open', 'Erin\u00a0', [uriOf('open', 1)]);
    // `@erin` to the service: no one's, as for a query.
    await giveItemsTo(fixture.database, 'open', '@@erin', [uriOf('open', 2)]);
    await storeComments(fixture.database, ['\tErin']);

    const run = await eraseErin();

    expect(run.status).toBe(0);
    expect(run.stdout).toEqual(
      expect.arrayContaining([
        'stored_items: 1 row removed',
        // A completed task keeps its items for an hour.
        'task_items: 3 rows removed (tasks: open, tabbed)',
        expect.stringMatching(/^datasets: 1 rewritten, 2 rows removed \(tasks: tabbed -2\)/),
      ]),
    );
    expect(lines('tabbed').map((row) => row.username)).toEqual(['dave', 'dave']);
    const left = await fixture.database.query<{ username: string }[]>(
      `SELECT item->>'username' AS username FROM task_items WHERE task_id = 'open' ORDER BY uri`,
    );
    expect(left.map((row) => row.username)).toEqual(['dave', '@@erin']);
  });

  /** The dataset downloads of a replica whose clock says `at`. */
  const downloadAt = (at: () => Date) =>
    new DatasetDownloadService(
      { find: (id: string) => task(id) } as unknown as TasksService,
      parquetService(),
      { now: at } as Clock,
      testConfig({ dataDir: fixture.dataDir }),
    );

  // Its completion is kept (completed_after polls read it), but its Last-Modified moves with its
  // bytes (dataset_written_at): a client revalidating by date alone, not by ETag, kept the copy
  // holding the author's rows (a 304).
  it("answers an If-Modified-Since of the JSON lines file's old date with the new file, and one of a dataset without the author 304", async () => {
    const before = await compiledTask('mixed', [1]);
    await compiledTask('other', []);
    const download = downloadAt(() => new Date());
    const old = await download.open('mixed', 'jsonl', {}, true);
    const otherOld = await download.open('other', 'jsonl', {}, true);
    expect(old.lastModified).toEqual(
      new Date(Math.floor(before.completed_at!.getTime() / 1000) * 1000),
    );

    expect((await eraseErin()).status).toBe(0);

    const after = await download.open('mixed', 'jsonl', {
      ifModifiedSince: old.lastModified!.toUTCString(),
    });
    if (after.status !== 200) throw new Error(`answered ${after.status}, not the new file`);
    const recorded = await task('mixed');
    expect(recorded.completed_at).toEqual(before.completed_at);
    expect(after.lastModified!.getTime()).toBeGreaterThan(old.lastModified!.getTime());
    const fresh = await bytesOf(after.file.getStream());
    expect(createHash('sha256').update(fresh).digest('hex')).toBe(recorded.dataset_sha256);
    expect(recorded.dataset_sha256).not.toBe(before.dataset_sha256);
    // The new date answers 304 from then on.
    expect(
      (
        await download.open('mixed', 'jsonl', {
          ifModifiedSince: after.lastModified!.toUTCString(),
        })
      ).status,
    ).toBe(304);

    // Only read: its date stays, and so does the client's copy.
    const other = await download.open('other', 'jsonl', {
      ifModifiedSince: otherOld.lastModified!.toUTCString(),
    });
    expect(other).toEqual({
      status: 304,
      sha256: otherOld.sha256,
      lastModified: otherOld.lastModified,
    });
  });

  it('dates the rewritten JSON lines file the second after the one it replaced, from a command whose clock is behind', async () => {
    const before = await compiledTask('mixed', [0]);
    const download = downloadAt(() => new Date(T0 + 3_600_000));
    const old = await download.open('mixed', 'jsonl', {}, true);
    // The command's clock says T0, a minute behind the replica that completed the task.
    const erasure = new DatasetErasure(
      new DatasetRecordsRepository(fixture.database),
      fixture.dataDir,
      ERASURE_LOCK_TIMEOUT_MS,
      { now: () => new Date(T0) },
    );

    const outcome = await erasure.eraseFrom(
      before,
      isAuthorOf(erasedAuthor('reddit', 'erin')),
      false,
    );

    expect(outcome).toMatchObject({ outcome: 'rewritten', removed: 1 });
    const after = await download.open('mixed', 'jsonl', {
      ifModifiedSince: old.lastModified!.toUTCString(),
    });
    if (after.status !== 200) throw new Error(`answered ${after.status}, not the new file`);
    await bytesOf(after.file.getStream());
    expect(after.lastModified).toEqual(new Date(old.lastModified!.getTime() + 1000));
  });

  // Its Last-Modified moves with its bytes (recordParquet): the old time is kept to build on.
  it('gives the Parquet file made after an erasure a later time than the one it replaced, on a replica whose clock is behind', async () => {
    await compiledTask('mixed', [0]);
    const late = new Date(T0 + 3_600_000);
    await fixture.database.query(
      `UPDATE scraping_tasks SET parquet_written_at = $1 WHERE id = 'mixed'`,
      [late.toISOString()],
    );
    expect((await eraseErin()).status).toBe(0);

    // This replica's clock says T0 + 1 min, behind the time the old file was recorded at.
    expect(await parquetService().ensure(await task('mixed'))).not.toBeNull();

    const writtenAt = (await task('mixed')).parquet_written_at;
    expect(writtenAt!.getTime()).toBeGreaterThan(late.getTime());
  });
});
