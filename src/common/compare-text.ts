/**
 * Orders text by UTF-16 code unit, the same on every replica: `localeCompare` follows the
 * process's locale, so replicas under different LANGs ordered ties differently.
 */
export function compareText(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
