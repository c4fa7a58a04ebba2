import { PythonFloat, pythonFromIsoFormat, pythonIsoDate, pythonJsonDumps } from './python-json';

// The expected texts are what CPython 3.11 prints for the same values.
describe(pythonJsonDumps.name, () => {
  it('indents as json.dumps(indent=4) does, escaping every non-ASCII character', () => {
    const value = [
      {
        id: 'caf\u00e9',
        weight: new PythonFloat(1),
        params: { keyword: null, label: '#\u{1F600}\u007f\n', n: [], o: {} },
      },
      new PythonFloat(0.1 + 0.2),
      3,
    ];
    expect(pythonJsonDumps(value, 4)).toBe(
      '[\n    {\n        "id": "caf\\u00e9",\n        "weight": 1.0,\n        "params": {\n' +
        '            "keyword": null,\n            "label": "#\\ud83d\\ude00\\u007f\\n",\n' +
        '            "n": [],\n            "o": {}\n        }\n    },\n    0.30000000000000004,\n' +
        '    3\n]',
    );
    expect(pythonJsonDumps([], 4)).toBe('[]');
  });

  it('separates items with ", " and ": " without an indent', () => {
    expect(pythonJsonDumps({ a: [1, '\u00e9', { b: null }], c: new PythonFloat(0.5) })).toBe(
      '{"a": [1, "\\u00e9", {"b": null}], "c": 0.5}',
    );
  });

  it('writes floats as repr does', () => {
    const repr = (value: number) => pythonJsonDumps(new PythonFloat(value));
    expect([1e-5, 1.5e-5, 1e16, 123456789012345, 0.0001, 0.25, 0].map(repr)).toEqual([
      '1e-05',
      '1.5e-05',
      '1e+16',
      '123456789012345.0',
      '0.0001',
      '0.25',
      '0.0',
    ]);
    // json.dumps(-0.0) keeps the sign.
    expect(repr(-0)).toBe('-0.0');
  });
});

describe(pythonIsoDate.name, () => {
  it('writes a UTC instant as datetime.isoformat() does, never with Z', () => {
    expect(pythonIsoDate(new Date('2026-01-01T00:00:00.000Z'))).toBe('2026-01-01T00:00:00+00:00');
    expect(pythonIsoDate(new Date('2026-11-20T12:00:00.250Z'))).toBe(
      '2026-11-20T12:00:00.250000+00:00',
    );
  });
});

// What CPython 3.10's datetime.fromisoformat raises ValueError on (the subnet's Python).
describe(pythonFromIsoFormat.name, () => {
  it('refuses year 0, even when the offset would carry it into year 1', () => {
    expect(pythonFromIsoFormat('0000-12-31T23:00:00-02:00')).toBeUndefined();
  });

  it('refuses 29 February of a century year that is not a leap year', () => {
    expect(pythonFromIsoFormat('1900-02-29')).toBeUndefined();
    expect(pythonFromIsoFormat('2000-02-29')).toEqual(new Date('2000-02-29T00:00:00Z'));
  });

  it('refuses an offset of hours alone or with milliseconds (3.11 reads both, 3.10 does not)', () => {
    expect(pythonFromIsoFormat('2026-11-20T12:00:00+01')).toBeUndefined();
    expect(pythonFromIsoFormat('2026-11-20T12:00:00+01:00:00.123')).toBeUndefined();
    expect(pythonFromIsoFormat('2026-11-20T12:00:00+01:00:00.123456')).toEqual(
      new Date('2026-11-20T10:59:59.876Z'),
    );
  });

  // Held in UTC here: an instant past 9999 has no date Python writes or reads.
  it('refuses an instant that falls outside years 1 to 9999 once in UTC', () => {
    expect(pythonFromIsoFormat('9999-12-31T23:00:00-02:00')).toBeUndefined();
  });
});
