import { jsonErrorPosition, jsonTooDeepPosition } from './json-error-position';

describe(jsonErrorPosition.name, () => {
  // Each position is Python's: json.loads(text) raises JSONDecodeError with `pos` that one.
  it.each([
    // V8 gives no position for these ("Unexpected token", "Unexpected end of JSON input").
    ['{"a":tru}', 5],
    ['{"a":', 5],
    ['{"a":t}', 5],
    ['[1,]', 3],
    ['tru', 0],
    ['   ', 3],
    ['[', 1],
    ['{', 1],
    // V8 gives another position for these.
    ['{"a":-}', 5],
    ['{"a":1.}', 6],
    ['{"a":"abc', 5],
    ['"\\u123', 2],
    ['{"a":"\\x"}', 6],
    // The same as V8's.
    ['{"name": "team" "tier": 1}', 16],
    ['{"a":1}x', 7],
    ['{"a" 1}', 5],
    ['{"a":1,}', 7],
    ['{"a":"\u0001"}', 6],
    ['{"a":[1,2', 9],
  ])('finds where Python stops reading %j: %d', (text, position) => {
    expect(jsonErrorPosition(text)).toBe(position);
  });

  it('counts characters as Python does, an astral one as one', () => {
    // 10 in UTF-16 units, as V8 reports it.
    expect(jsonErrorPosition('{"a":"😀" "b"}')).toBe(9);
  });

  it('takes NaN and Infinity, which Python reads but JSON.parse refuses, for no value', () => {
    expect(jsonErrorPosition('{"a":NaN}')).toBe(5);
    expect(jsonErrorPosition('[-Infinity]')).toBe(1);
  });

  it('finds no error in JSON, however deep', () => {
    expect(jsonErrorPosition('{"a": [1, -2.5e3, true, false, null, {}, [], "\\u00e9\\n"]}')).toBe(
      undefined,
    );
    const depth = 1_000_000;
    expect(jsonErrorPosition(`${'['.repeat(depth)}${']'.repeat(depth)}`)).toBe(undefined);
    expect(jsonErrorPosition(`${'['.repeat(depth)}}`)).toBe(depth);
  });
});

describe(jsonTooDeepPosition.name, () => {
  it('finds the bracket that opens one level more, an empty one too', () => {
    expect(jsonTooDeepPosition('[[1], {"a": [2]}]', 3)).toBe(undefined);
    expect(jsonTooDeepPosition('[[1], {"a": [2]}]', 2)).toBe(12);
    expect(jsonTooDeepPosition('{"[": [{}]}', 2)).toBe(7);
    expect(jsonTooDeepPosition('["é🙂", [[', 2)).toBe(8);
  });

  it('finds none behind a syntax error, one at that very bracket included', () => {
    // The parser meets the syntax error first, and answers it.
    expect(jsonTooDeepPosition('[1 [[[]]]]', 2)).toBe(undefined);
    expect(jsonTooDeepPosition('[[1 [', 2)).toBe(undefined);
    expect(jsonTooDeepPosition('[[1, [', 2)).toBe(5);
  });
});
