/**
 * The value of one sample in Prometheus text, found by metric name and exactly these labels
 * (in any order); undefined when the series does not exist. Apart from metrics.ts, which loads
 * the app, so that unit specs can read a registry's text without it.
 */
export function sample(
  text: string,
  name: string,
  labels: Record<string, string> = {},
): number | undefined {
  for (const line of text.split('\n')) {
    const match = /^([a-zA-Z_:][\w:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!match || match[1] !== name) continue;
    const found = Object.fromEntries(
      [...(match[2] ?? '').matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)].map((m) => [m[1], m[2]]),
    );
    const wanted = Object.entries(labels);
    if (
      wanted.length === Object.keys(found).length &&
      wanted.every(([key, value]) => found[key] === value)
    )
      return Number(match[3]);
  }
  return undefined;
}
