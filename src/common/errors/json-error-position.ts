/**
 * Where Python's `json.loads` stops on `text` that is not JSON, in characters as Python counts
 * them (code points): FastAPI's `json_invalid` error is at that position. V8's own message gives
 * a position for some errors only ("Unexpected token '}'" has none: `{"a":tru}` was reported at
 * 0, where FastAPI says 5), counts UTF-16 units, and stops elsewhere for some (`{"a":-}`: 6 in
 * V8, 5 in Python). This scanner follows CPython's decoder (Lib/json/decoder.py and its C
 * scanner): each error is where the value, delimiter or string it expected begins. It loops
 * rather than recurses, since a body may nest a million levels. Python takes `NaN` and
 * `Infinity`, which JSON.parse refuses: here they are no value (`Expecting value` at them).
 * Returns undefined for text it finds no error in.
 */
export function jsonErrorPosition(text: string): number | undefined {
  const error = scan(text, Infinity);
  return error === undefined ? undefined : codePointsBefore(text, error.at);
}

/**
 * Where `text` opens level `maxDepth + 1` (the position of that bracket, counted as
 * jsonErrorPosition counts), when that is the first error in it: where the parser stops for a body
 * refused for its depth (http/json-bodies.ts). Undefined when something before it is wrong, a
 * syntax error at that very bracket included (`[1 [`), or when it is no deeper.
 */
export function jsonTooDeepPosition(text: string, maxDepth: number): number | undefined {
  const error = scan(text, maxDepth);
  return error?.tooDeep ? codePointsBefore(text, error.at) : undefined;
}

type Container = 'object' | 'array';

/** The first error: its UTF-16 index, and whether it is the level too many. */
interface ScanError {
  at: number;
  tooDeep: boolean;
}

const syntaxError = (at: number): ScanError => ({ at, tooDeep: false });

/** The first error in `text`, if any. */
function scan(text: string, maxDepth: number): ScanError | undefined {
  const open: Container[] = [];
  let i = skipWhitespace(text, 0);
  for (;;) {
    // A value is expected at i.
    const char = text[i];
    if (char === '"') {
      const end = stringEnd(text, i);
      if (end < 0) return syntaxError(-end - 1);
      i = end;
    } else if (char === '{' || char === '[') {
      // An empty one is a level too, as json-bodies.ts counts it.
      if (open.length >= maxDepth) return { at: i, tooDeep: true };
      const close = char === '{' ? '}' : ']';
      i = skipWhitespace(text, i + 1);
      if (text[i] === close) {
        i += 1;
      } else {
        open.push(char === '{' ? 'object' : 'array');
        if (char === '[') continue;
        const afterKey = key(text, i);
        if (afterKey < 0) return syntaxError(-afterKey - 1);
        i = afterKey;
        continue;
      }
    } else {
      const end = literalEnd(text, i);
      if (end === undefined) return syntaxError(i);
      i = end;
    }
    // A value ended at i: close what it completes, up to the next value expected.
    for (;;) {
      const container = open.at(-1);
      i = skipWhitespace(text, i);
      if (container === undefined) return i === text.length ? undefined : syntaxError(i);
      const close = container === 'object' ? '}' : ']';
      if (text[i] === close) {
        open.pop();
        i += 1;
        continue;
      }
      if (text[i] !== ',') return syntaxError(i);
      i = skipWhitespace(text, i + 1);
      if (container === 'object') {
        const afterKey = key(text, i);
        if (afterKey < 0) return syntaxError(-afterKey - 1);
        i = afterKey;
      }
      break;
    }
  }
}

/**
 * Reads an object's key and its colon at i: the index of its value (white space skipped), or
 * −(position + 1) of the error.
 */
function key(text: string, i: number): number {
  if (text[i] !== '"') return -i - 1;
  const end = stringEnd(text, i);
  if (end < 0) return end;
  const colon = skipWhitespace(text, end);
  if (text[colon] !== ':') return -colon - 1;
  return skipWhitespace(text, colon + 1);
}

const ESCAPES = new Set(['"', '\\', '/', 'b', 'f', 'n', 'r', 't']);

/**
 * The index past the string whose quote is at `start`, or −(position + 1) of its error: a
 * control character at itself, a bad escape at its backslash, a bad `\u` escape at its `u`, and
 * a string that never ends at its opening quote.
 */
function stringEnd(text: string, start: number): number {
  let i = start + 1;
  for (;;) {
    if (i >= text.length) return -start - 1;
    const code = text.charCodeAt(i);
    if (code === 0x22) return i + 1;
    if (code <= 0x1f) return -i - 1;
    if (code !== 0x5c) {
      i += 1;
      continue;
    }
    const escaped = text[i + 1];
    if (escaped === undefined) return -start - 1;
    if (escaped !== 'u') {
      if (!ESCAPES.has(escaped)) return -i - 1;
      i += 2;
      continue;
    }
    // CPython wants a character after the four digits (`>=`), else it is this escape's error.
    if (i + 6 >= text.length || !/^[0-9a-fA-F]{4}$/.test(text.slice(i + 2, i + 6)))
      return -(i + 1) - 1;
    i += 6;
  }
}

const NUMBER = /-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][-+]?[0-9]+)?/y;

/** The index past the literal or number at i, or undefined if none begins there. */
function literalEnd(text: string, i: number): number | undefined {
  for (const word of ['null', 'true', 'false'])
    if (text.startsWith(word, i)) return i + word.length;
  NUMBER.lastIndex = i;
  return NUMBER.test(text) ? NUMBER.lastIndex : undefined;
}

function skipWhitespace(text: string, i: number): number {
  while (i < text.length && ' \t\n\r'.includes(text[i])) i += 1;
  return i;
}

/** Code points before the UTF-16 index `at`: a surrogate pair is one character to Python. */
function codePointsBefore(text: string, at: number): number {
  let pairs = 0;
  for (let i = 1; i < at; i += 1) {
    const code = text.charCodeAt(i);
    const previous = text.charCodeAt(i - 1);
    if (code >= 0xdc00 && code <= 0xdfff && previous >= 0xd800 && previous <= 0xdbff) {
      pairs += 1;
    }
  }
  return at - pairs;
}
