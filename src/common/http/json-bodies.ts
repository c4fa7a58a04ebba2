import { json, RequestHandler } from 'express';

/** Only these methods carry a body here; FastAPI ignores the body of the others, and so do we. */
const BODY_METHODS = new Set(['POST', 'PUT', 'PATCH']);

/** Far deeper than any request schema (≤ 5 levels), far shallower than what overflows the stack. */
const MAX_JSON_DEPTH = 64;

/**
 * The JSON body parser, for body-carrying methods only. Compressed bodies are refused (415):
 * the interface has none, and inflating them would add a failure mode (corrupt data) of its
 * own. A body nested deeper than MAX_JSON_DEPTH is refused like malformed JSON (422
 * `json_invalid`): class-transformer walks bodies recursively and overflows the stack on
 * thousands of levels, which JSON.parse accepts.
 */
export function jsonBodies(limit: string): RequestHandler {
  const parse = json({ limit, inflate: false });
  return (request, response, next) => {
    if (!BODY_METHODS.has(request.method)) return next();
    parse(request, response, (error?: unknown) => {
      if (error || jsonDepth(request.body) <= MAX_JSON_DEPTH) return next(error);
      const tooDeep = Object.assign(new Error(`JSON nested deeper than ${MAX_JSON_DEPTH} levels`), {
        type: 'entity.parse.failed',
        status: 400,
      });
      next(tooDeep);
    });
  };
}

/** Nesting depth of a parsed JSON value, without recursion (the value may be very deep). */
function jsonDepth(value: unknown): number {
  let deepest = 0;
  const pending: Array<[unknown, number]> = [[value, 0]];
  while (pending.length > 0) {
    const [item, depth] = pending.pop()!;
    if (typeof item !== 'object' || item === null) continue;
    deepest = Math.max(deepest, depth + 1);
    if (deepest > MAX_JSON_DEPTH) return deepest;
    for (const child of Object.values(item)) pending.push([child, depth + 1]);
  }
  return deepest;
}
