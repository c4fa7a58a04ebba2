/** `url` with its password, if any, written `***`: for messages naming a server. */
export function redactPassword(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.password) parsed.password = '***';
    return parsed.toString();
  } catch {
    return '(a URL that does not parse)';
  }
}
