import { isStorableText } from './validation/storable-text';

/**
 * Text as subnet 13's Python code writes it, for files and messages its readers parse: the
 * output of `json.dumps` with its defaults, and `datetime.isoformat()` of a UTC datetime; and
 * dates as its `datetime.fromisoformat` reads them.
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

/**
 * The instant `datetime.fromisoformat(text)` of Python 3.10 reads, or undefined where it raises
 * ValueError: the subnet declares Python 3.10 (setup.py, ruff's `py310`), and every later
 * version reads what 3.10 reads (3.11 reads more: `.5`, `+0530`, `Z`). CPython 3.10's C parser:
 * `YYYY-MM-DD`, then any one character and `HH[:MM[:SS[.fff|.ffffff]]]` (or `[:fff|:ffffff]`
 * after the seconds), then an offset `±HH:MM[:SS[.ffffff]]` strictly within a day. Before an
 * offset, one stray ASCII character after a component is passed over (`06:30:15 +01:00`).
 * No `Z`, no other space, lower-case `z` never. A date-time without an offset is taken as UTC
 * (Python's is naive); one outside years 1..9999 once in UTC is refused.
 */
export function pythonFromIsoFormat(text: string): Date | undefined {
  if (!isStorableText(text)) return undefined;
  const [year, month, day] = [digits(text, 0, 4), digits(text, 5, 2), digits(text, 8, 2)];
  if (year === undefined || month === undefined || day === undefined) return undefined;
  if (text[4] !== '-' || text[7] !== '-') return undefined;
  let time: TimeOfDay | undefined = { clock: [0, 0, 0, 0], offsetMicroseconds: 0 };
  if (text.length > 10) {
    const separator = String.fromCodePoint(text.codePointAt(10)!);
    time = timeOfDay(text.slice(10 + separator.length));
  }
  if (!time) return undefined;
  const [hour, minute, second, microsecond] = time.clock;
  if (year < 1 || month < 1 || month > 12 || hour > 23 || minute > 59 || second > 59)
    return undefined;
  if (day < 1 || day > new Date(Date.UTC(2000, month, 0)).getUTCDate()) return undefined;
  if (month === 2 && day === 29 && !(year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0)))
    return undefined;
  const local = new Date(Date.UTC(2000, 0, 1, hour, minute, second));
  local.setUTCFullYear(year, month - 1, day);
  const instant = new Date(
    local.getTime() + Math.floor((microsecond - time.offsetMicroseconds) / 1000),
  );
  const utcYear = instant.getUTCFullYear();
  return utcYear >= 1 && utcYear <= 9999 ? instant : undefined;
}

interface TimeOfDay {
  /** Hour, minute, second, microsecond as written. */
  clock: number[];
  offsetMicroseconds: number;
}

/** CPython 3.10's `parse_isoformat_time`: the clock, then an offset after the first + or -. */
function timeOfDay(text: string): TimeOfDay | undefined {
  const sign = text.search(/[+-]/);
  const clock = clockOf(sign < 0 ? text : text.slice(0, sign));
  if (!clock) return undefined;
  if (sign < 0) return clock.trailing ? undefined : { clock: clock.values, offsetMicroseconds: 0 };
  const zone = text.slice(sign);
  if (![6, 9, 16].includes(zone.length)) return undefined;
  const offset = clockOf(zone.slice(1));
  if (!offset || offset.trailing) return undefined;
  const [hours, minutes, seconds, microseconds] = offset.values;
  const magnitude = ((hours * 60 + minutes) * 60 + seconds) * 1e6 + microseconds;
  if (magnitude >= 86_400e6) return undefined;
  return { clock: clock.values, offsetMicroseconds: zone[0] === '-' ? -magnitude : magnitude };
}

/**
 * CPython 3.10's `parse_hh_mm_ss_ff`: two digits each for the hour, minute and second, each
 * followed by `:` or, to end them, `.`; then 3 or 6 digits of a fraction. `trailing`: one
 * character was left after a component, which the caller accepts only before an offset.
 */
function clockOf(text: string): { values: number[]; trailing: boolean } | undefined {
  const values = [0, 0, 0, 0];
  let position = 0;
  for (let index = 0; index < 3; index++) {
    const value = digits(text, position, 2);
    if (value === undefined) return undefined;
    values[index] = value;
    position += 2;
    if (position >= text.length) return { values, trailing: false };
    const separator = text[position++];
    // C reads bytes: a character outside ASCII is more than one, never a stray one.
    if (separator > '\u007f') return undefined;
    if (position >= text.length) return { values, trailing: true };
    if (separator === '.') break;
    if (separator !== ':') return undefined;
  }
  const remaining = text.length - position;
  if (remaining !== 3 && remaining !== 6) return undefined;
  const fraction = digits(text, position, remaining);
  if (fraction === undefined) return undefined;
  values[3] = remaining === 3 ? fraction * 1000 : fraction;
  return { values, trailing: false };
}

/** `count` ASCII digits at `from` as a number, or undefined. */
function digits(text: string, from: number, count: number): number | undefined {
  const part = text.slice(from, from + count);
  return part.length === count && /^[0-9]+$/.test(part) ? Number(part) : undefined;
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
export function pythonFloat(value: number): string {
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
