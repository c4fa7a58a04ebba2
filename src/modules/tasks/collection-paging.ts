/**
 * Where a task's next collection looks, and what it learned. A collection asks for the newest
 * `limit` items of a time range; asking the whole window every time returns the same newest
 * items, so a task whose window lies in the past would stop at one page. Instead a task pages
 * back through its window (each page ends where the previous one was complete) and, while its
 * window includes the present, alternates those pages with one of what is new since the last.
 * Stored in Postgres (scraping_tasks.collect_*), so it survives restarts and every replica
 * continues from the same place.
 */
export interface CollectionProgress {
  /** End of the latest newest-first page: what is newer is new. Null before the first. */
  head: Date | null;
  /** End (inclusive) of the next page back; null when nothing is left to page back through. */
  cursor: Date | null;
  /** Start (inclusive) of the pages back: where the range being paged through begins. */
  floor: Date | null;
  /** Whether the next collection pages back (alternation while the window is open). */
  backNext: boolean;
}

export const NO_PROGRESS: CollectionProgress = {
  head: null,
  cursor: null,
  floor: null,
  backNext: false,
};

/** The progress as a task stores it (scraping_tasks.collect_*). */
export function progressOf(task: {
  collect_head: Date | null;
  collect_cursor: Date | null;
  collect_floor: Date | null;
  collect_back_next: boolean;
}): CollectionProgress {
  return {
    head: task.collect_head,
    cursor: task.collect_cursor,
    floor: task.collect_floor,
    backNext: task.collect_back_next,
  };
}

/**
 * One collection's range: a query's start (null: none) and end dates, both inclusive. `final`
 * is the newest-first page of a task's final collection (finalPage).
 */
export interface CollectionPage {
  kind: 'newest' | 'back' | 'final';
  start: Date | null;
  end: Date;
}

/** What a page's answer says about the range it asked. */
export interface PageOutcome {
  /** The answer held `limit` items: there may be older ones in the range. */
  full: boolean;
  /** The time from which the answer holds everything it found (to the page's end). */
  completeFrom: Date | null;
}

interface TaskWindow {
  post_start: Date | null;
  post_end: Date | null;
}

/** The window's end as of `now`: the task's post end, or now while that is ahead. */
export function windowEnd(task: TaskWindow, now: Date): Date {
  return task.post_end && task.post_end < now ? task.post_end : now;
}

/**
 * The next collection's page, or null while the window has not begun (nothing to ask for yet).
 * A page never reaches outside the window: its start is the window's start at the earliest,
 * whatever the progress says (a task whose window began after its registration had pages of
 * `[last head, now]` before the window, and stored what they found; an audit's finding).
 */
export function nextPage(
  task: TaskWindow,
  progress: CollectionProgress,
  now: Date,
): CollectionPage | null {
  const end = windowEnd(task, now);
  if (task.post_start && task.post_start > end) return null;
  const nothingNew = progress.head !== null && progress.head >= end;
  if (progress.cursor && (progress.backNext || nothingNew)) return backPage(task, progress, end);
  // A window paged through to its start is walked again from the top: miners may have scraped
  // older posts since (uri dedupe keeps the dataset free of repeats).
  const start = progress.head && !nothingNew ? progress.head : null;
  return { kind: 'newest', start: latest(start, task.post_start), end };
}

/** The next page back of the range being paged through, within the window ending at `end`. */
function backPage(task: TaskWindow, progress: CollectionProgress, end: Date): CollectionPage {
  return {
    kind: 'back',
    start: latest(progress.floor, task.post_start),
    end: progress.cursor! < end ? progress.cursor! : end,
  };
}

/**
 * The next page of a task's final collection, once it expired; null when nothing is left to
 * ask. First what is new since the last newest-first page up to the window's end at expiry
 * (none after it: the task's posts end there), whatever paging back was under way; when that
 * page is full, pages back through the same range down to that last head, as a collection
 * pages back a full page (afterPage): a busy label's last hour holds more than a page. The
 * compile waits for them (TaskLifecycleRepository.claimExpired), so the dataset has the task's
 * last hour; what they did not reach by then is this page still (finalGap: TaskCompiler logs it,
 * and the completed task shows it).
 * A collection made at or after expiry is the final collection's (`last_collected_at`).
 */
export function finalPage(
  task: TaskWindow & { expires_at: Date; last_collected_at: Date | null },
  progress: CollectionProgress,
): CollectionPage | null {
  const end = windowEnd(task, task.expires_at);
  if (task.post_start && task.post_start > end) return null;
  if (task.last_collected_at && task.last_collected_at >= task.expires_at)
    return progress.cursor ? backPage(task, progress, end) : null;
  if (progress.head && progress.head >= end) return null;
  return { kind: 'final', start: latest(progress.head, task.post_start), end };
}

/**
 * What a task's final collection did not reach, once it is over: the page it would ask next
 * (finalPage), a range of posting times, both ends inclusive (start null: from the window's
 * open start). Null when nothing was left. Read where the compile warns of it, where the API
 * shows it (`dataset.gap`) and where the manifest says it, so they cannot disagree
 * (docs/decisions.md, "Scraping task lifecycle").
 */
export function finalGap(
  task: Parameters<typeof finalPage>[0] & Parameters<typeof progressOf>[0],
): { start: Date | null; end: Date } | null {
  const missed = finalPage(task, progressWithin(task, progressBeforePaging(task)));
  return missed && { start: missed.start, end: missed.end };
}

/**
 * The task's progress, with the head a collection before migration TaskCollectionPaging left:
 * each asked the whole window up to its own time (`last_collected_at`, set only by a collection
 * that was answered) and recorded no head, so the last one's end is the head. Since the
 * migration every answered collection records one, so a task collected with none is such a
 * task. Not for finalPage: no such task collects any more, and the SQL matching it
 * (awaitingFinalCollection) stays as it is.
 */
function progressBeforePaging(
  task: TaskWindow & Parameters<typeof progressOf>[0] & { last_collected_at: Date | null },
): CollectionProgress {
  const progress = progressOf(task);
  if (progress.head || !task.last_collected_at) return progress;
  return { ...progress, head: windowEnd(task, task.last_collected_at) };
}

/**
 * The progress with nothing before the window's start: a range being paged back whose end lies
 * before it (left by a release that paged there) is done, and one reaching before it starts
 * at it.
 */
export function progressWithin(task: TaskWindow, progress: CollectionProgress): CollectionProgress {
  const start = task.post_start;
  if (!start || !progress.cursor) return progress;
  if (progress.cursor < start) return { ...progress, cursor: null, floor: null, backNext: false };
  return { ...progress, floor: latest(progress.floor, start) };
}

function latest(date: Date | null, other: Date | null): Date | null {
  if (!date || !other) return date ?? other;
  return date > other ? date : other;
}

export function afterPage(
  progress: CollectionProgress,
  page: CollectionPage,
  outcome: PageOutcome,
): CollectionProgress {
  const more = outcome.full && outcome.completeFrom !== null;
  // The final collection's range is the one paged back from here: the range paged before it is
  // given up, as its task compiles once this one is done.
  if (page.kind === 'final')
    return more
      ? { head: page.end, cursor: outcome.completeFrom, floor: page.start, backNext: true }
      : { head: page.end, cursor: null, floor: null, backNext: false };
  if (page.kind === 'newest') {
    // A full page leaves older items of its range to page back through. While an earlier range
    // is still being paged through, they are left out: one range at a time keeps the pages
    // reaching further back, where a busy label's new items would otherwise restart them.
    const startsPaging = more && !progress.cursor;
    const cursor = startsPaging ? outcome.completeFrom : progress.cursor;
    const floor = startsPaging ? page.start : progress.floor;
    return { head: page.end, cursor, floor, backNext: cursor !== null };
  }
  if (!more) return { ...progress, cursor: null, floor: null, backNext: false };
  // More items at one instant than a page holds would stop the cursor: step past the instant.
  const cursor =
    outcome.completeFrom! < page.end ? outcome.completeFrom! : new Date(page.end.getTime() - 1);
  if (progress.floor && cursor < progress.floor)
    return { ...progress, cursor: null, floor: null, backNext: false };
  return { ...progress, cursor, backNext: false };
}
