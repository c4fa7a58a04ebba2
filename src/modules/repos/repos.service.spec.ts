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

  it('lists nothing for a value over 1000 characters once trimmed', () => {
    expect(listedRepoName(` ${'a'.repeat(1000)} `)).toBe('a'.repeat(1000));
    expect(listedRepoName('a'.repeat(1001))).toBeUndefined();
  });
});
