import { AuthorItemsRepository } from '../../src/modules/erasure/author-items.repository';
import { TaskLifecycleRepository } from '../../src/modules/tasks/task-lifecycle.repository';
import { ErasedAuthorsRepository } from '../../src/network/erased-authors.repository';
import { generateCorpus } from '../../src/devnet/corpus';
import { XItem } from '../../src/network/protocol';
import { redditComment } from '../support/items';
import { insertExpiredTask } from '../support/expired-tasks';
import { erasureFixture, storeComments, T0 } from '../support/erasure';

/**
 * The erased-authors register: the command records the author before it deletes anything, and
 * the writers every path goes through (the item store's save, a task's addItems) and on-demand
 * answers (ErasedAuthorsRepository, read by NetworkService.query) keep the author out from then
 * on. What the command takes out: author-erasure.medium-spec.ts.
 */
describe('The erased-authors register', () => {
  const { fixture, eraseErin, erase } = erasureFixture('erasedreg');

  const registered = () =>
    fixture.database.query<{ source: number; author: string; erased_at: Date }[]>(
      'SELECT source, author, erased_at FROM erased_authors ORDER BY source, author',
    );
  const storedNames = async () =>
    (
      await fixture.database.query<{ username: string }[]>(
        'SELECT username FROM stored_items ORDER BY username',
      )
    ).map((row) => row.username);

  it('is written by the command, and keeps the author out of the item store from then on', async () => {
    const run = await eraseErin();

    expect(run.status).toBe(0);
    expect(await registered()).toEqual([
      { source: 1, author: 'erin', erased_at: expect.any(Date) as Date },
    ]);
    expect(run.stdout).toContainEqual(
      expect.stringMatching(
        /^erased_authors: registered at \S+: kept out of the item store, task collections, on-demand answers and query_bucket from now on$/,
      ),
    );
    // A miner serves erin's comment again, spelled as records may spell it, beside dave's.
    await storeComments(fixture.database, ['@Erin ', 'dave', 'ERIN']);
    expect(await storedNames()).toEqual(['dave']);
    // The register is by source: with X's dave erased, Reddit's dave is still stored.
    await erase('x', 'dave');
    await fixture.database.query('TRUNCATE stored_items');
    await storeComments(fixture.database, ['dave']);
    expect(await storedNames()).toEqual(['dave']);
  });

  /**
   * A writer's transaction, begun and left open: a copy of dave's stored comment as erin's,
   * inserted before the register's row existed, not yet committed (a collection's insert waits so
   * on its task row's update). Rows a delete cannot see until the commit.
   */
  async function writerInFlight() {
    await storeComments(fixture.database, ['dave']);
    const writer = fixture.database.createQueryRunner();
    await writer.connect();
    await writer.startTransaction();
    await writer.query(
      `CREATE TEMP TABLE copy ON COMMIT DROP AS SELECT * FROM stored_items WHERE username = 'dave'`,
    );
    await writer.query(`UPDATE copy SET uri = uri || 'erin/', username = 'erin'`);
    await writer.query('INSERT INTO stored_items SELECT * FROM copy');
    return writer;
  }

  // A review: the deletes ran past a writer's uncommitted rows, and one of erin's was left.
  it('waits for the writers under way as the author was registered, then deletes what they wrote', async () => {
    const writer = await writerInFlight();
    const running = eraseErin();
    await new Promise((resolve) => setTimeout(resolve, 500));
    await writer.commitTransaction();
    await writer.release();

    const run = await running;
    expect(run.status).toBe(0);
    expect(await storedNames()).toEqual(['dave']);
  });

  it('says the tables not checked when a writer is still writing past the lock timeout', async () => {
    const writer = await writerInFlight();
    try {
      expect(await new AuthorItemsRepository(fixture.database).awaitWriters(200)).toBe(false);
    } finally {
      await writer.rollbackTransaction();
      await writer.release();
    }
    expect(await new AuthorItemsRepository(fixture.database).awaitWriters(200)).toBe(true);
  });

  it("waits for a task's collection under way as the author was registered, then deletes what it wrote", async () => {
    await insertExpiredTask(fixture.database, 'active', T0 + 86_400_000, 0, 60_000);
    const uri = 'https://www.reddit.com/r/bitcoin/comments/abc/title/inflight/';
    const datetime = new Date(T0).toISOString();
    const comment = redditComment({ uri, url: uri, id: 't1_inflight', username: 'erin', datetime });
    const writer = fixture.database.createQueryRunner();
    await writer.connect();
    await writer.startTransaction();
    await writer.query(
      `INSERT INTO task_items (task_id, uri, datetime, item, collected_at)
       VALUES ('active', $1, $2, $3::jsonb, $2)`,
      [uri, datetime, JSON.stringify(comment)],
    );
    const running = eraseErin();
    await new Promise((resolve) => setTimeout(resolve, 500));
    await writer.commitTransaction();
    await writer.release();

    expect((await running).status).toBe(0);
    expect(await fixture.database.query('SELECT uri FROM task_items')).toEqual([]);
  });

  // Registered in a statement of its own before anything is deleted: a run that fails at its
  // first delete has kept the author out already.
  it('is committed before the deletes: a run whose delete fails has registered the author', async () => {
    await storeComments(fixture.database, ['erin']);
    await fixture.database.query(
      `CREATE FUNCTION refuse_delete() RETURNS trigger LANGUAGE plpgsql AS $$
       BEGIN RAISE EXCEPTION 'delete refused'; END $$`,
    );
    await fixture.database.query(
      `CREATE TRIGGER refuse_delete BEFORE DELETE ON stored_items
       FOR EACH STATEMENT EXECUTE FUNCTION refuse_delete()`,
    );
    try {
      const run = await eraseErin();

      expect(run.status).toBe(1);
      expect(run.stderr).toEqual([expect.stringMatching(/^erasure failed: delete refused/)]);
      expect(await registered()).toEqual([
        { source: 1, author: 'erin', erased_at: expect.any(Date) as Date },
      ]);
    } finally {
      await fixture.database.query('DROP TRIGGER refuse_delete ON stored_items');
      await fixture.database.query('DROP FUNCTION refuse_delete()');
    }
  });

  it("keeps the author out of a task's collected items, and keeps the others'", async () => {
    await insertExpiredTask(fixture.database, 'active', T0 + 86_400_000, 0, 60_000);
    await eraseErin();
    // X's dave is no Reddit account's: his erasure keeps Reddit's dave in.
    await erase('x', 'dave');
    const comment = (n: number, username: string) => {
      const uri = `https://www.reddit.com/r/bitcoin/comments/abc/title/again${n}/`;
      const datetime = new Date(T0 - n * 60_000).toISOString();
      return redditComment({ uri, url: uri, id: `t1_again${n}`, username, datetime });
    };

    const { added, outsideWindow } = await new TaskLifecycleRepository(fixture.database).addItems(
      'active',
      [comment(1, '@Erin'), comment(2, 'dave'), comment(3, ' erin ')],
      { head: new Date(T0), cursor: null, floor: null, backNext: false },
      new Date(T0),
    );

    expect({ added, outsideWindow }).toEqual({ added: 1, outsideWindow: 0 });
    const kept = await fixture.database.query<{ username: string }[]>(
      "SELECT item->>'username' AS username FROM task_items WHERE task_id = 'active'",
    );
    expect(kept).toEqual([{ username: 'dave' }]);
    const [{ items_collected }] = await fixture.database.query<{ items_collected: number }[]>(
      "SELECT items_collected FROM scraping_tasks WHERE id = 'active'",
    );
    expect(items_collected).toBe(1);
  });

  it('registers nothing in a dry run, and says it would', async () => {
    const run = await eraseErin('--dry-run');

    expect(run.status).toBe(0);
    expect(await registered()).toEqual([]);
    expect(run.stdout).toContainEqual(
      'erased_authors: would be registered (kept out of the item store, task collections, on-demand answers and query_bucket from now on)',
    );
    await storeComments(fixture.database, ['erin']);
    expect(await storedNames()).toEqual(['erin']);
  });

  it('is kept as it was by a run again: one row, its first time', async () => {
    await eraseErin();
    const [first] = await registered();

    const again = await eraseErin();
    const dryRun = await eraseErin('--dry-run');

    expect(again.status).toBe(0);
    expect(await registered()).toEqual([first]);
    const since = first.erased_at.toISOString();
    expect(again.stdout).toContainEqual(
      `erased_authors: registered already (since ${since}): kept out of the item store, task collections, on-demand answers and query_bucket from now on`,
    );
    expect(dryRun.stdout).toContainEqual(`erased_authors: registered already (since ${since})`);
  });

  /** An X post of the author `username`. */
  const xPost = (username: string): XItem => {
    const [post] = generateCorpus({ seed: 13, now: new Date(T0), size: { x: 1, reddit: 0 } })
      .items as XItem[];
    return { ...post, user: { ...post.user, username } };
  };

  it("answers on-demand items without a registered author's, of that source only", async () => {
    await eraseErin();
    await erase('x', 'SomeHandle');
    const items = [
      redditComment({ username: '@Erin' }),
      redditComment({ username: 'dave' }),
      xPost('somehandle'),
    ];
    const answers = new ErasedAuthorsRepository(fixture.database);

    expect(await answers.withoutErased(1, items)).toEqual([items[1], items[2]]);
    // Reddit's erin is no X account's: an X answer keeps an X erin.
    const xErin = xPost('erin');
    expect(await answers.withoutErased(2, [xErin, items[2]])).toEqual([xErin]);
    expect(await answers.withoutErased(2, [])).toEqual([]);
  });
});
