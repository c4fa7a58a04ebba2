/**
 * What follows `prefix` in `url`'s path ('' or '/…', the query left out) when that path is
 * `prefix` or lies under it, else undefined. Compared exactly, case included, as the app routes
 * (bootstrap.ts, 'case sensitive routing'): `/DOCS/` reaches no handler of `/docs/`, and whatever
 * guards a path must match it as the router does.
 */
export function pathUnder(url: string, prefix: string): string | undefined {
  const end = url.indexOf('?');
  const path = end === -1 ? url : url.slice(0, end);
  if (!path.startsWith(prefix)) return undefined;
  const rest = path.slice(prefix.length);
  return rest === '' || rest[0] === '/' ? rest : undefined;
}
