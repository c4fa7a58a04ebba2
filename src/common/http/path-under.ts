/**
 * What follows `prefix` in `url`'s path ('' or '/…', the query left out) when that path is
 * `prefix` or lies under it, else undefined. Compared without regard to case, as Express routes:
 * `/DOCS/` reaches the same handlers as `/docs/`, so whatever guards a path must match it so too.
 * `prefix` is given in lower case.
 */
export function pathUnder(url: string, prefix: string): string | undefined {
  const end = url.indexOf('?');
  const path = end === -1 ? url : url.slice(0, end);
  if (path.slice(0, prefix.length).toLowerCase() !== prefix) return undefined;
  const rest = path.slice(prefix.length);
  return rest === '' || rest[0] === '/' ? rest : undefined;
}
