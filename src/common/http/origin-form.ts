import type { NextFunction, Request, Response } from 'express';

/** An absolute-form target's scheme and authority, without userinfo. */
const SCHEME_AND_AUTHORITY = /^https?:\/\/[^/?#@]*(?=[/?#]|$)/i;

/**
 * RFC 9112 (3.2.2): a server accepts a request target in absolute form
 * (`POST http://host/api/v1/keys/…/deactivate`), as a proxy sends it. Express routes one by its
 * path, but every check here that reads `request.url` (the key to deactivate in its path, the
 * docs pages' headers and files) expects the origin form: an absolute target was refused as
 * carrying a secret (found by an audit). So it is read as the path and query it names, the way
 * Express reads it, and logged so. One with userinfo (`http://user@host/…`, which no HTTP client
 * may send) is left as it came: scanned whole for secrets, it is refused if it holds one.
 */
export function originForm(request: Request, _response: Response, next: NextFunction): void {
  const { url } = request;
  if (url.startsWith('/')) return next();
  const authority = SCHEME_AND_AUTHORITY.exec(url);
  if (authority) {
    const rest = url.slice(authority[0].length);
    // originalUrl too: the checks after routing read it (Express's routers cut `url`).
    request.url = request.originalUrl = rest.startsWith('/') ? rest : `/${rest}`;
  }
  next();
}
