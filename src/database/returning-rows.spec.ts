import { affectedCount, returningRows } from './returning-rows';

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

describe(affectedCount.name, () => {
  it("answers the rowCount of an UPDATE or DELETE's [rows, rowCount]", () => {
    expect(affectedCount([[], 3])).toBe(3);
    expect(affectedCount([[{ uid: 1 }], 1])).toBe(1);
    expect(affectedCount([[], 0])).toBe(0);
  });

  // A SELECT's or INSERT's rows carry no count: reading one there is a mistake in the caller.
  it('throws on the rows of a SELECT or INSERT', () => {
    expect(() => affectedCount([{ uid: 1 }, { uid: 2 }])).toThrow(/UPDATE or DELETE/);
    expect(() => affectedCount([])).toThrow(/UPDATE or DELETE/);
  });
});
