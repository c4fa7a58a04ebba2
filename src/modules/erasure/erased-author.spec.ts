import { erasedAuthor, ErasedAuthorError, isAuthorOf } from './erased-author';

describe(erasedAuthor.name, () => {
  it('reads the source in any case and the name as queries compare it', () => {
    expect(erasedAuthor('X', ' @SomeHandle ')).toEqual({ source: 'x', username: 'somehandle' });
    expect(erasedAuthor(' reddit ', 'Some-User')).toEqual({
      source: 'reddit',
      username: 'some-user',
    });
  });

  // The forms requests arrive in (a runbook audit): Reddit's `u/` and `/u/`, X's `@`.
  it.each([
    ['reddit', 'u/Some-User'],
    ['reddit', '/u/some-user'],
    ['reddit', ' U/some-user '],
    ['reddit', '@some-user'],
  ])('reads %s name %j as the username alone', (source, name) => {
    expect(erasedAuthor(source, name)).toEqual({ source: 'reddit', username: 'some-user' });
  });
  it('reads an X handle with its @', () => {
    expect(erasedAuthor('x', '@Some_Handle')).toEqual({ source: 'x', username: 'some_handle' });
  });

  // A mistyped name matches nothing, and the summary would say the author's posts were gone.
  it.each([
    ['mastodon', 'erin', '--source must be X or Reddit'],
    [undefined, 'erin', '--source must be X or Reddit'],
    ['x', undefined, '--username must name the author'],
    ['x', '  ', '--username must name the author'],
    ['x', '@@erin', '--username is not an X handle'],
    ['x', 'some-user', '--username is not an X handle'],
    ['reddit', 'a b', '--username is not a Reddit username'],
    ['reddit', 'u/', '--username is not a Reddit username'],
    ['reddit', 'u/u/erin', '--username is not a Reddit username'],
    ['x', 'u/erin', '--username is not an X handle'],
    ['x', 'https://x.com/SomeHandle', 'profile URL: give the handle alone'],
    ['x', 'x.com/SomeHandle', 'profile URL: give the handle alone'],
    ['x', 'twitter.com/somehandle', 'profile URL: give the handle alone'],
    ['reddit', 'https://www.reddit.com/user/erin', 'profile URL: give the username alone'],
  ])('refuses source %j and username %j', (source, name, said) => {
    expect(() => erasedAuthor(source, name)).toThrow(ErasedAuthorError);
    expect(() => erasedAuthor(source, name)).toThrow(said);
  });
});

describe(isAuthorOf.name, () => {
  const handle = isAuthorOf({ source: 'x', username: 'somehandle' });
  const user = isAuthorOf({ source: 'reddit', username: 'someuser' });

  // As the service reads an author (authorKey): the matcher and the item store agree.
  it("finds the author's items in every spelling a record has, of its own source only", () => {
    expect(handle({ source: 'X', user: { username: 'SomeHandle' } })).toBe(true);
    expect(handle({ source: 'X', user: { username: ' @somehandle ' } })).toBe(true);
    expect(handle({ source: 'X', user: { username: '\tSomeHandle\n' } })).toBe(true);
    expect(handle({ source: 'X', user: { username: 'somehandle\u00a0' } })).toBe(true);
    // `@somehandle` to the service: no one's, as for a query.
    expect(handle({ source: 'X', user: { username: '@@somehandle' } })).toBe(false);
    expect(handle({ source: 'X', username: 'somehandle', user: { username: 'other' } })).toBe(
      false,
    );
    expect(handle({ source: 'REDDIT', username: 'somehandle' })).toBe(false);
    expect(user({ source: 'REDDIT', username: '@SomeUser' })).toBe(true);
    expect(user({ source: 'REDDIT', username: 'someuser2' })).toBe(false);
    expect(user({ source: 'X', user: { username: 'someuser' } })).toBe(false);
    expect(user(null)).toBe(false);
  });
});
