import {
  afterPage,
  CollectionPage,
  CollectionProgress,
  finalPage,
  nextPage,
  NO_PROGRESS,
  progressWithin,
} from './collection-paging';

const at = (hour: number) => new Date(Date.UTC(2025, 0, 1, hour));

/** The next page of a window that has begun. */
function pageOf(...args: Parameters<typeof nextPage>): CollectionPage {
  const page = nextPage(...args);
  if (!page) throw new Error('the window has not begun');
  return page;
}

describe('collection paging', () => {
  const openWindow = { post_start: at(0), post_end: null };
  const pastWindow = { post_start: at(0), post_end: at(10) };

  it('asks the whole window first, then pages back from the oldest item of a full page', () => {
    const first = pageOf(pastWindow, NO_PROGRESS, at(20));
    expect(first).toEqual({ kind: 'newest', start: at(0), end: at(10) });

    const progress = afterPage(NO_PROGRESS, first, { full: true, completeFrom: at(8) });
    expect(pageOf(pastWindow, progress, at(21))).toEqual({
      kind: 'back',
      start: at(0),
      end: at(8),
    });
  });

  it('keeps paging back a closed window, then walks it again from the top once done', () => {
    let progress: CollectionProgress = {
      head: at(10),
      cursor: at(8),
      floor: at(0),
      backNext: false,
    };
    const back = pageOf(pastWindow, progress, at(21));
    expect(back.kind).toBe('back');

    progress = afterPage(progress, back, { full: true, completeFrom: at(5) });
    expect(pageOf(pastWindow, progress, at(22))).toMatchObject({ kind: 'back', end: at(5) });

    progress = afterPage(progress, pageOf(pastWindow, progress, at(22)), {
      full: false,
      completeFrom: at(1),
    });
    expect(progress.cursor).toBeNull();
    expect(pageOf(pastWindow, progress, at(23))).toEqual({
      kind: 'newest',
      start: at(0),
      end: at(10),
    });
  });

  it('alternates new items and pages back while the window includes the present', () => {
    let progress = afterPage(NO_PROGRESS, pageOf(openWindow, NO_PROGRESS, at(5)), {
      full: true,
      completeFrom: at(4),
    });
    const back = pageOf(openWindow, progress, at(6));
    expect(back).toEqual({ kind: 'back', start: at(0), end: at(4) });

    progress = afterPage(progress, back, { full: true, completeFrom: at(3) });
    expect(pageOf(openWindow, progress, at(7))).toEqual({
      kind: 'newest',
      start: at(5),
      end: at(7),
    });

    // A full page of new items while paging back: the pages go on from where they were.
    progress = afterPage(progress, pageOf(openWindow, progress, at(7)), {
      full: true,
      completeFrom: at(6),
    });
    expect(pageOf(openWindow, progress, at(8))).toEqual({
      kind: 'back',
      start: at(0),
      end: at(3),
    });
  });

  it('steps past an instant holding more items than a page', () => {
    const progress = { head: at(10), cursor: at(8), floor: at(0), backNext: true };
    const page = pageOf(pastWindow, progress, at(20));

    const next = afterPage(progress, page, { full: true, completeFrom: at(8) });

    expect(next.cursor).toEqual(new Date(at(8).getTime() - 1));
  });

  // Miners are asked no further than the present: the next page of new items starts there.
  it('collects a window that ends in the future up to now, then what is new since', () => {
    const futureWindow = { post_start: at(0), post_end: at(30) };
    const first = pageOf(futureWindow, NO_PROGRESS, at(5));
    expect(first).toEqual({ kind: 'newest', start: at(0), end: at(5) });

    const progress = afterPage(NO_PROGRESS, first, { full: false, completeFrom: at(1) });
    expect(pageOf(futureWindow, progress, at(6))).toEqual({
      kind: 'newest',
      start: at(5),
      end: at(6),
    });
  });

  // A full page whose oldest item is at the window's start may have left others of that instant.
  it("pages back once more when a full page reaches the window's first instant", () => {
    const progress = { head: at(10), cursor: at(3), floor: at(0), backNext: false };
    const page = pageOf(pastWindow, progress, at(20));

    const next = afterPage(progress, page, { full: true, completeFrom: at(0) });

    expect(pageOf(pastWindow, next, at(21))).toEqual({ kind: 'back', start: at(0), end: at(0) });
  });

  // Registered at hour 0 for posts from hour 48: the first page asked [48, 0] and later ones
  // [last head, now], every one before the window (an audit's finding).
  it('asks nothing before a window that starts later, then never before its start', () => {
    const laterWindow = { post_start: at(48), post_end: at(96) };
    let progress = NO_PROGRESS;
    const pages: CollectionPage[] = [];
    for (let hour = 0; hour <= 60; hour++) {
      const page = nextPage(laterWindow, progress, at(hour));
      if (hour < 48) expect(page).toBeNull();
      if (!page) continue;
      pages.push(page);
      progress = afterPage(progress, page, { full: true, completeFrom: page.end });
    }
    expect(pages[0]).toEqual({ kind: 'newest', start: at(48), end: at(48) });
    for (const page of pages) {
      expect(page.start!.getTime()).toBeGreaterThanOrEqual(at(48).getTime());
      expect(page.end.getTime()).toBeLessThanOrEqual(at(96).getTime());
    }
  });

  // Progress a release before left: a range before the window being paged back, a head before it.
  it("keeps progress left before a window's start out of its pages", () => {
    const laterWindow = { post_start: at(48), post_end: at(96) };
    const before = { head: at(47), cursor: at(30), floor: at(20), backNext: true };
    const progress = progressWithin(laterWindow, before);
    expect(progress).toEqual({ head: at(47), cursor: null, floor: null, backNext: false });
    expect(nextPage(laterWindow, progress, at(50))).toEqual({
      kind: 'newest',
      start: at(48),
      end: at(50),
    });

    const across = { head: at(50), cursor: at(49), floor: at(40), backNext: true };
    expect(nextPage(laterWindow, progressWithin(laterWindow, across), at(51))).toEqual({
      kind: 'back',
      start: at(48),
      end: at(49),
    });
  });

  // The last hour before expiry was never asked for: collections stopped at expiry.
  it('asks, once expired, what is new up to expiry, whatever paging back was under way', () => {
    const paging = { head: at(20), cursor: at(5), floor: at(0), backNext: true };
    const last = { expires_at: at(21), last_collected_at: at(20) };
    expect(finalPage({ ...openWindow, ...last }, paging)).toEqual({
      kind: 'final',
      start: at(20),
      end: at(21),
    });
    // Never collected: the whole window, to expiry.
    expect(finalPage({ ...openWindow, ...last, last_collected_at: null }, NO_PROGRESS)).toEqual({
      kind: 'final',
      start: at(0),
      end: at(21),
    });
    // A window that ended before expiry, collected to its end, or begun after expiry: nothing.
    expect(finalPage({ ...pastWindow, ...last }, { ...paging, head: at(10) })).toBe(null);
    expect(finalPage({ post_start: at(30), post_end: null, ...last }, NO_PROGRESS)).toBe(null);
  });

  // Head 23:00, expiry 24:00, a full final page back to 23:50: the 23:00–23:50 posts were never
  // asked for, the task compiled without them (an audit's finding).
  it('pages the final range back from a full final page down to the last head', () => {
    const minute = (minutes: number) => new Date(at(23).getTime() + minutes * 60_000);
    const expired = { ...openWindow, expires_at: at(24), last_collected_at: at(23) };
    let progress: CollectionProgress = {
      head: at(23),
      cursor: at(5),
      floor: at(0),
      backNext: true,
    };
    const first = finalPage(expired, progress)!;
    expect(first).toMatchObject({ start: at(23), end: at(24) });

    // Collected after expiry: the pages back under way before are dropped for the final range.
    const collected = { ...expired, last_collected_at: minute(61) };
    progress = afterPage(progress, first, { full: true, completeFrom: minute(50) });
    const back = finalPage(collected, progress);
    expect(back).toEqual({ kind: 'back', start: at(23), end: minute(50) });

    progress = afterPage(progress, back!, { full: true, completeFrom: minute(20) });
    expect(finalPage(collected, progress)).toEqual({
      kind: 'back',
      start: at(23),
      end: minute(20),
    });
    progress = afterPage(progress, finalPage(collected, progress)!, {
      full: false,
      completeFrom: minute(1),
    });
    expect(finalPage(collected, progress)).toBeNull();
  });
});
