import { returningRows } from './returning-rows';

describe(returningRows.name, () => {
  it("unwraps an UPDATE or DELETE ... RETURNING's [rows, rowCount]", () => {
    expect(returningRows([[{ uid: 1 }, { uid: 2 }], 2])).toEqual([{ uid: 1 }, { uid: 2 }]);
    expect(returningRows([[], 0])).toEqual([]);
  });

  // Two rows are a pair too, and stay rows.
  it('answers the rows of a SELECT or INSERT as they are', () => {
    expect(returningRows([{ uid: 1 }, { uid: 2 }])).toEqual([{ uid: 1 }, { uid: 2 }]);
    expect(returningRows([])).toEqual([]);
  });
});
