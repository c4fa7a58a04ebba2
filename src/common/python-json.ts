/**
 * Text as subnet 13's Python code writes it, for files and messages its readers parse: the
 * output of `json.dumps` with its defaults, and `datetime.isoformat()` of a UTC datetime.
 */

/**
 * A number Python holds as a float: `json.dumps` writes it with `repr`, so `1.0` and `1e-05`
 * where JavaScript writes `1` and `0.00001`. Plain numbers are written as JSON writes them
 * (Python's ints).
 */
export class PythonFloat {
  constructor(readonly value: number) {}
}

/**
 * `json.dumps(value)` (`indent` unset: `", "` and `": "` between items) or `json.dumps(value,
 * indent=n)` (items on lines of their own, `","` and `": "`), with `ensure_ascii`: every
 * character outside printable ASCII is a `\uXXXX` escape, so the file reads the same whatever
 * encoding the reader's locale opens it with. Keys keep the objects' order; `undefined` values
 * are not expected (JSON has none).
 */
export function pythonJsonDumps(value: unknown, indent?: number): string {
  return dump(value, indent, 0);
}

/**
 * A UTC instant as Python's `datetime.isoformat()` writes it: `+00:00`, and microseconds only
 * when not zero (`2026-11-20T12:00:00+00:00`, `…T12:00:00.250000+00:00`). Every Python's
 * `datetime.fromisoformat` reads it; before 3.11 (the subnet supports 3.10) it refuses the `Z`
 * of `toISOString()`.
 */
export function pythonIsoDate(date: Date): string {
  const iso = date.toISOString();
  const milliseconds = iso.slice(20, 23);
  return `${iso.slice(0, 19)}${milliseconds === '000' ? '' : `.${milliseconds}000`}+00:00`;
}

function dump(value: unknown, indent: number | undefined, depth: number): string {
  if (value instanceof PythonFloat) return pythonFloat(value.value);
  if (typeof value === 'string') return asciiString(value);
  if (Array.isArray(value)) {
    return container('[', ']', value, indent, depth, (item) => dump(item, indent, depth + 1));
  }
  if (value !== null && typeof value === 'object') {
    return container('{', '}', Object.entries(value), indent, depth, ([key, item]) => {
      return `${asciiString(key)}: ${dump(item, indent, depth + 1)}`;
    });
  }
  return JSON.stringify(value);
}

function container<T>(
  open: string,
  close: string,
  items: readonly T[],
  indent: number | undefined,
  depth: number,
  write: (item: T) => string,
): string {
  if (items.length === 0) return `${open}${close}`;
  if (indent === undefined) return `${open}${items.map(write).join(', ')}${close}`;
  const inner = '\n' + ' '.repeat(indent * (depth + 1));
  const outer = '\n' + ' '.repeat(indent * depth);
  return `${open}${inner}${items.map(write).join(`,${inner}`)}${outer}${close}`;
}

/** JSON's escapes, then every character outside ' '..'~' as `\uXXXX` (surrogates one by one). */
function asciiString(text: string): string {
  return JSON.stringify(text).replace(
    /[\u007f-\uffff]/g,
    (character) => `\\u${character.charCodeAt(0).toString(16).padStart(4, '0')}`,
  );
}

/**
 * `repr(float)`: the shortest digits that read back as the same number (as JavaScript's), in
 * fixed notation from 1e-4 up to 1e16 with `.0` on whole numbers, in exponent notation outside
 * (`1e-05`, `1.5e+16`: a sign and at least two digits).
 */
function pythonFloat(value: number): string {
  if (!Number.isFinite(value)) throw new Error(`${value} has no JSON form`);
  if (Object.is(value, -0)) return '-0.0';
  const magnitude = Math.abs(value);
  if (magnitude !== 0 && (magnitude < 1e-4 || magnitude >= 1e16)) {
    const [mantissa, exponent] = value.toExponential().split('e');
    const sign = exponent.startsWith('-') ? '-' : '+';
    return `${mantissa}e${sign}${exponent.replace(/^[+-]/, '').padStart(2, '0')}`;
  }
  const text = String(value);
  return Number.isInteger(value) ? `${text}.0` : text;
}
