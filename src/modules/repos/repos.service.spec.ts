import { listedRepoName } from './repos.service';

describe('listedRepoName', () => {
  it('lists a name without its surrounding white space', () => {
    expect([' alice/x ', 'alice/x', '\tbob/y\r\n', 'a b/c'].map(listedRepoName)).toEqual([
      'alice/x',
      'alice/x',
      'bob/y',
      'a b/c',
    ]);
  });

  it('lists nothing for null, blank values and no_dataset_provided, padded or not', () => {
    expect(
      [null, '', '   ', 'no_dataset_provided', ' no_dataset_provided '].map(listedRepoName),
    ).toEqual([undefined, undefined, undefined, undefined, undefined]);
  });

  it('skips a value over 1000 characters once trimmed, counting characters as code points', () => {
    expect(listedRepoName(` ${'a'.repeat(1000)} `)).toBe('a'.repeat(1000));
    expect(listedRepoName('a'.repeat(1001))).toEqual({ skipped: 'too long' });
    // 1000 characters, 2000 UTF-16 units and bytes.
    expect(listedRepoName('😀'.repeat(500))).toBe('😀'.repeat(500));
    expect(listedRepoName('é'.repeat(1000))).toBe('é'.repeat(1000));
  });

  it("skips a name over 2000 bytes of UTF-8, too long for the table's index", () => {
    expect(listedRepoName('名'.repeat(666))).toBe('名'.repeat(666));
    expect(listedRepoName('名'.repeat(667))).toEqual({ skipped: 'too long' });
  });

  it('skips a name Postgres cannot store as it is', () => {
    expect(['a/b\u0000', 'a/\ud800b', '\udc00'].map(listedRepoName)).toEqual([
      { skipped: 'not storable' },
      { skipped: 'not storable' },
      { skipped: 'not storable' },
    ]);
    expect(listedRepoName('a/\ud83d\ude00')).toBe('a/😀');
  });
});
