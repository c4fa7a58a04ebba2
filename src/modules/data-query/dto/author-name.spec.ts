import { plainToInstance } from 'class-transformer';
import { validateSync } from 'class-validator';
import { AUTHOR_NAME_PATTERN } from './author-name';
import { DataQueryRequestDto } from './data-query-request.dto';

/** The indexes of the names the DTO refuses as a query's usernames. */
function refused(source: string, usernames: string[]): number[] {
  return usernames.flatMap((name, index) => {
    const request = plainToInstance(DataQueryRequestDto, { source, usernames: [name] });
    return validateSync(request).some((error) => error.property === 'usernames') ? [index] : [];
  });
}

const PATTERN = new RegExp(AUTHOR_NAME_PATTERN);

describe('NamesAnAuthor', () => {
  const takenByBoth = ['elonmusk', '@ElonMusk', ' @elon_musk ', 'a', 'x'.repeat(50), '\tnasa\n'];
  const refusedByBoth = ['@', ' ', ' @ ', '@@', '@@elon', '@ elon', 'el on', 'u/spez', 'élan'];

  it('takes a handle after an optional @, white space around it, for both sources', () => {
    for (const source of ['x', 'reddit', 'Reddit'])
      expect(refused(source, takenByBoth)).toEqual([]);
  });

  it('refuses a name that is no username: a second @, white space after the @, other characters', () => {
    const all = refusedByBoth.map((_, index) => index);
    for (const source of ['x', 'reddit']) expect(refused(source, refusedByBoth)).toEqual(all);
    expect(refused('x', ['x'.repeat(51)])).toEqual([0]);
  });

  it("takes a Reddit username's `-`, which no X handle has", () => {
    expect(refused('reddit', ['some-user', '@-'])).toEqual([]);
    expect(refused('x', ['some-user', '@-'])).toEqual([0, 1]);
  });

  it("documents the pattern it enforces (Reddit's, the wider, for both sources)", () => {
    for (const name of [...takenByBoth, 'some-user']) expect(name).toMatch(PATTERN);
    for (const name of refusedByBoth) expect(name).not.toMatch(PATTERN);
  });
});
