import { isUtf8 } from 'node:buffer';
import type { IncomingMessage } from 'node:http';
import { json, raw, RequestHandler } from 'express';
import { jsonTooDeepPosition } from '../errors/json-error-position';
import { bytesOf } from './body-limit';
import { closeAfterAnswer } from './lingering-close';

/** Only these methods carry a body here; FastAPI ignores the body of the others, and so do we. */
const BODY_METHODS = new Set(['POST', 'PUT', 'PATCH']);

/** Far deeper than any request schema (≤ 5 levels), far shallower than what overflows the stack. */
const MAX_JSON_DEPTH = 64;

/**
 * The JSON body parser, for body-carrying methods only. Compressed bodies are refused (415):
 * the interface has none, and inflating them would add a failure mode (corrupt data) of its
 * own. So is any charset but UTF-8 (labelled `utf-8` or `utf8`), and a body whose bytes are not
 * UTF-8 (415: JSON is UTF-8, and a decoder would otherwise replace what it cannot read). Any
 * JSON value is parsed (`null` is a body the validation reports as missing, as FastAPI does,
 * not malformed JSON). A body nested deeper than MAX_JSON_DEPTH is refused like malformed JSON
 * (422 `json_invalid`, at the bracket that opens the level too many): class-transformer walks
 * bodies recursively and overflows the stack on thousands of levels, which JSON.parse accepts.
 * It is refused from its bytes, before JSON.parse (tooDeepPosition).
 *
 * Which bodies are JSON is FastAPI's rule: a body without a Content-Type (or an empty one), or an
 * `application/json` or `application/*+json` one. Any other body (a form, plain text) is kept as
 * its text, as FastAPI keeps its bytes, so validation answers it as it answers `42`: 422
 * `model_attributes_type` at `body`, not `missing` as if nothing had been sent.
 *
 * A body whose Content-Length is over `limit` is refused (413) before a byte of it is read, on a
 * connection then closed: body-parser read and dropped the whole of it before its 413, for as long
 * as the client took to send it, up to HTTP_REQUEST_TIMEOUT_MS (an audit's finding). The
 * answer to another method that announces a body, which is ignored, closes its connection too.
 * Both are closed lingering (closeAfterAnswer): what the client still sends, within bounds, is
 * read and dropped after the answer, so that a client still uploading can read it.
 */
export function jsonBodies(limit: string): RequestHandler {
  const limitBytes = bytesOf(limit);
  const parse = json({
    limit: limitBytes,
    inflate: false,
    strict: false,
    verify: readBody,
    type: any,
  });
  const readOther = raw({ limit: limitBytes, inflate: false, type: any });
  return (request, response, next) => {
    if (!BODY_METHODS.has(request.method)) {
      // Its body is ignored, so the answer may come before it: on a kept-alive connection the
      // request timeout then answered the body that never came with a 408 no request of the
      // client's matched (a review's finding). Closed after the answer instead, as a body
      // refused over BODY_LIMIT is.
      if (declaresBody(request)) closeAfterAnswer(request, response);
      return next();
    }
    const contentType = request.headers['content-type'];
    const charset = /;\s*charset\s*=\s*"?([^";\s]+)/i.exec(contentType ?? '')?.[1];
    if (charset !== undefined && !/^utf-?8$/i.test(charset))
      return next(notUtf8(`charset ${charset}`));
    // `utf8` is UTF-8 under another label (WHATWG's, which browsers read), but body-parser takes
    // only charsets that begin `utf-` and would answer 415: it is handed the label it knows.
    if (contentType && charset?.toLowerCase() === 'utf8')
      request.headers['content-type'] = contentType.replace(/(charset\s*=\s*"?)utf8/i, '$1utf-8');
    if (declaresBodyOver(request, limitBytes)) {
      // The body is left unread: the connection cannot carry another request after it.
      closeAfterAnswer(request, response);
      return next(Object.assign(new Error('request entity too large'), TOO_LARGE));
    }
    if (contentType && !isJsonMediaType(contentType)) {
      return readOther(request, response, (error?: unknown) => {
        const bytes: unknown = request.body;
        request.body = Buffer.isBuffer(bytes) && bytes.length > 0 ? bytes.toString() : undefined;
        next(error);
      });
    }
    parse(request, response, (error?: unknown) => {
      if (emptyBodies.has(request)) request.body = undefined;
      next(error);
    });
  };
}

/** body-parser's error for a body over its limit: bodyParserErrorHandler answers it 413. */
const TOO_LARGE = { type: 'entity.too.large', status: 413 };

/**
 * Whether `request` says, by its Content-Length, that its body is over `limitBytes`, for a method
 * whose body is read here (jsonBodies refuses it unread).
 */
export function declaresBodyOver(request: IncomingMessage, limitBytes: number): boolean {
  const length = request.headers['content-length'];
  return (
    BODY_METHODS.has(request.method ?? '') && length !== undefined && Number(length) > limitBytes
  );
}

/** Whether `request` announces a body (a Content-Length over 0, or chunks). */
function declaresBody(request: IncomingMessage): boolean {
  const length = request.headers['content-length'];
  return (
    (length !== undefined && Number(length) > 0) ||
    request.headers['transfer-encoding'] !== undefined
  );
}

/** Every request that reaches a parser here has a body to read as that parser reads it. */
const any = (): boolean => true;

/** `application/json` or `application/<anything>+json`, parameters aside. */
function isJsonMediaType(contentType: string): boolean {
  const mediaType = contentType.split(';', 1)[0].trim().toLowerCase();
  return mediaType === 'application/json' || /^application\/[^/]+\+json$/.test(mediaType);
}

/**
 * Requests sent with an empty body: body-parser reads one as `{}`, FastAPI as no body (missing).
 */
const emptyBodies = new WeakSet<object>();

/**
 * Notes an empty body, requires UTF-8, and refuses a body too deep before it is parsed. UTF-16
 * and UTF-32 text is often valid UTF-8 byte by byte (ASCII with NULs between): they are told apart
 * as RFC 4627 does, by a NUL among the first two bytes, or by their BOM.
 */
function readBody(request: object, _response: unknown, body: Buffer): void {
  if (body.length === 0) emptyBodies.add(request);
  const wide =
    body.length >= 2 &&
    (body[0] === 0 ||
      body[1] === 0 ||
      (body[0] === 0xfe && body[1] === 0xff) ||
      (body[0] === 0xff && body[1] === 0xfe));
  if (wide || !isUtf8(body)) throw notUtf8('a body that is not UTF-8');
  const position = tooDeepPosition(body);
  if (position !== undefined) {
    throw Object.assign(new Error(`JSON nested deeper than ${MAX_JSON_DEPTH} levels`), {
      type: 'entity.parse.failed',
      status: 400,
      position,
    });
  }
}

/** Handled as an unsupported encoding (415) by bodyParserErrorHandler. */
function notUtf8(what: string): Error {
  return Object.assign(new Error(`${what}: only UTF-8 JSON is accepted`), {
    type: 'encoding.unsupported',
    status: 415,
  });
}

/**
 * The bytes that open, close and escape levels and strings (ASCII: no UTF-8 sequence holds one).
 */
const QUOTE = 0x22; // "
const BACKSLASH = 0x5c;
const OPEN_ARRAY = 0x5b; // [
const CLOSE_ARRAY = 0x5d; // ]
const OPEN_OBJECT = 0x7b; // {
const CLOSE_OBJECT = 0x7d; // }

/**
 * Where (in characters, as FastAPI counts) `body` opens level MAX_JSON_DEPTH + 1, or undefined
 * when it is no deeper, or when its text is wrong before that bracket: the parser then stops at
 * its own error, having read no deeper, and answers it as before. Found on the bytes, before
 * JSON.parse: parsing 1 MB of `[` then `]` took ~740 ms of CPU, before authentication, to refuse
 * it after (a security audit's finding). One pass, no copy; brackets in strings are no level.
 * Depth is counted as the parsed value's, an empty object or array a level too. Nothing after the
 * bracket is read: a body also malformed further on is refused for its depth.
 */
function tooDeepPosition(body: Buffer): number | undefined {
  // body-parser drops a UTF-8 BOM before parsing, and FastAPI reads the text after it too.
  const start = body[0] === 0xef && body[1] === 0xbb && body[2] === 0xbf ? 3 : 0;
  let depth = 0;
  let inString = false;
  for (let i = start; i < body.length; i += 1) {
    const byte = body[i];
    if (inString) {
      if (byte === BACKSLASH) i += 1;
      else if (byte === QUOTE) inString = false;
    } else if (byte === QUOTE) {
      inString = true;
    } else if (byte === OPEN_ARRAY || byte === OPEN_OBJECT) {
      depth += 1;
      if (depth > MAX_JSON_DEPTH)
        return jsonTooDeepPosition(body.toString('utf8', start, i + 1), MAX_JSON_DEPTH);
    } else if (byte === CLOSE_ARRAY || byte === CLOSE_OBJECT) {
      // Below 0 only after a bracket that closes nothing, where the parser stops.
      depth -= 1;
    }
  }
  return undefined;
}
