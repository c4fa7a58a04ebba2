import { afterPage, CollectionProgress, nextPage, NO_PROGRESS } from './collection-paging';

const at = (hour: number) => new Date(Date.UTC(2025, 0, 1, hour));

describe('collection paging', () => {
  const openWindow = { post_start: at(0), post_end: null };
  const pastWindow = { post_start: at(0), post_end: at(10) };

  it('asks the whole window first, then pages back from the oldest item of a full page', () => {
    const first = nextPage(pastWindow, NO_PROGRESS, at(20));
    expect(first).toEqual({ kind: 'newest', start: at(0), end: at(10) });

    const progress = afterPage(NO_PROGRESS, first, { full: true, completeFrom: at(8) });
    expect(nextPage(pastWindow, progress, at(21))).toEqual({
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
    const back = nextPage(pastWindow, progress, at(21));
    expect(back.kind).toBe('back');

    progress = afterPage(progress, back, { full: true, completeFrom: at(5) });
    expect(nextPage(pastWindow, progress, at(22))).toMatchObject({ kind: 'back', end: at(5) });

    progress = afterPage(progress, nextPage(pastWindow, progress, at(22)), {
      full: false,
      completeFrom: at(1),
    });
    expect(progress.cursor).toBeNull();
    expect(nextPage(pastWindow, progress, at(23))).toEqual({
      kind: 'newest',
      start: at(0),
      end: at(10),
    });
  });

  it('alternates new items and pages back while the window includes the present', () => {
    let progress = afterPage(NO_PROGRESS, nextPage(openWindow, NO_PROGRESS, at(5)), {
      full: true,
      completeFrom: at(4),
    });
    const back = nextPage(openWindow, progress, at(6));
    expect(back).toEqual({ kind: 'back', start: at(0), end: at(4) });

    progress = afterPage(progress, back, { full: true, completeFrom: at(3) });
    expect(nextPage(openWindow, progress, at(7))).toEqual({
      kind: 'newest',
      start: at(5),
      end: at(7),
    });

    // A full page of new items while paging back: the pages go on from where they were.
    progress = afterPage(progress, nextPage(openWindow, progress, at(7)), {
      full: true,
      completeFrom: at(6),
    });
    expect(nextPage(openWindow, progress, at(8))).toEqual({
      kind: 'back',
      start: at(0),
      end: at(3),
    });
  });

  it('steps past an instant holding more items than a page', () => {
    const progress = { head: at(10), cursor: at(8), floor: at(0), backNext: true };
    const page = nextPage(pastWindow, progress, at(20));

    const next = afterPage(progress, page, { full: true, completeFrom: at(8) });

    expect(next.cursor).toEqual(new Date(at(8).getTime() - 1));
  });

  // Miners are asked no further than the present: the next page of new items starts there.
  it('collects a window that ends in the future up to now, then what is new since', () => {
    const futureWindow = { post_start: at(0), post_end: at(30) };
    const first = nextPage(futureWindow, NO_PROGRESS, at(5));
    expect(first).toEqual({ kind: 'newest', start: at(0), end: at(5) });

    const progress = afterPage(NO_PROGRESS, first, { full: false, completeFrom: at(1) });
    expect(nextPage(futureWindow, progress, at(6))).toEqual({
      kind: 'newest',
      start: at(5),
      end: at(6),
    });
  });

  // A full page whose oldest item is at the window's start may have left others of that instant.
  it("pages back once more when a full page reaches the window's first instant", () => {
    const progress = { head: at(10), cursor: at(3), floor: at(0), backNext: false };
    const page = nextPage(pastWindow, progress, at(20));

    const next = afterPage(progress, page, { full: true, completeFrom: at(0) });

    expect(nextPage(pastWindow, next, at(21))).toEqual({ kind: 'back', start: at(0), end: at(0) });
  });
});
