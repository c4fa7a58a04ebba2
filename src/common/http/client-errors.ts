import { randomUUID } from 'node:crypto';
import { IncomingMessage, ServerResponse, STATUS_CODES, Server } from 'node:http';
import type { Duplex } from 'node:stream';
import { LoggerService } from '@nestjs/common';
import type { AllowedMethods } from '../errors/all-exceptions.filter';
import { ERROR_DETAILS } from '../errors/error-details';
import { answeredPastResponse, cutOffBeforeItsHead } from '../response-done';
import { bytesOf } from './body-limit';
import { declaresBodyOver } from './json-bodies';

export interface HttpServerLimits {
  /** Time a client has to send the request headers. */
  headersTimeoutMs: number;
  /** Time a client has to send the whole request (a slow body included). */
  requestTimeoutMs: number;
  /** How long an idle kept-alive connection stays open. */
  keepAliveTimeoutMs: number;
  /** BODY_LIMIT: a body declared longer is refused unread (jsonBodies). */
  bodyLimit: string;
}

/**
 * Node's parser errors, by code: what they mean to the client. Node (18 and later) reports both
 * timeouts, the headers' and the whole request's, as ERR_HTTP_REQUEST_TIMEOUT: one answer.
 */
const ANSWERS: Record<string, { status: number; detail: string }> = {
  HPE_HEADER_OVERFLOW: { status: 431, detail: ERROR_DETAILS.headersTooLarge },
  ERR_HTTP_REQUEST_TIMEOUT: { status: 408, detail: ERROR_DETAILS.requestTimeout },
};
const MALFORMED = { status: 400, detail: ERROR_DETAILS.malformedRequest };
/** How long a CONNECT's socket stays open after its answer for the client to read it and close. */
const CONNECT_LINGER_MS = 5_000;

/**
 * What Node's HTTP server would answer by itself, with an empty body and no request id, is
 * answered in the documented shape, `{"detail", "request_id"}`, or handed to the app:
 * - errors of its parser (a malformed request line, oversized headers, a client too slow to
 *   send its request), before Express sees the request: the status Node would have used, and
 *   the connection closed. Nothing of the request is echoed or logged (only the parser's code);
 * - an HTTP/1.1 request without `Host` (RFC 9112: a 400): left to the app (`requireHost`), so
 *   that its 400 is logged and counted like any other answer;
 * - an `Expect` other than `100-continue`: Node answered 417, a status no operation has; RFC
 *   9110 lets a server ignore an expectation it does not know (it MAY answer 417), so the
 *   request is handled as any other;
 * - `Expect: 100-continue`: Node sent `100 Continue` at once, and the client its body. A body
 *   declared over BODY_LIMIT, which jsonBodies refuses unread, gets no `100`: the client hears
 *   its 413 without sending the body (RFC 9110 lets a server answer without the `100`);
 * - `CONNECT`: Node closed the connection without a word. It is answered as any method a path
 *   lacks: 405 with `Allow` on a known path, else 404 (a proxy's `host:port` is no path here).
 */
export function answerClientErrors(
  server: Server,
  limits: HttpServerLimits,
  logger: LoggerService,
  allowedMethods: AllowedMethods,
): void {
  server.headersTimeout = limits.headersTimeoutMs;
  server.requestTimeout = limits.requestTimeoutMs;
  // Node's 5 s default closed idle connections a proxy in front still held for reuse (they keep
  // them 60 s or so), and the proxy answered 502 for a request it sent on one as it closed. The
  // two timeouts above do not count idle time (Node 18 and later check them only while a
  // request is arriving), so this one may be the longest.
  server.keepAliveTimeout = limits.keepAliveTimeoutMs;
  // Node checks those timeouts on an interval (30 s by default, read when the server starts
  // listening): once a second, a slow client is cut off within a second of its limit.
  (server as Server & { connectionsCheckingInterval: number }).connectionsCheckingInterval = 1000;
  (server as Server & { requireHostHeader: boolean }).requireHostHeader = false;
  server.on('clientError', (error: NodeJS.ErrnoException, socket: Duplex) => {
    // The request the socket was serving, if the parser got that far (a slow body, a pipelined
    // request's error): its answer may be under way, and it has its id.
    const serving = (socket as Duplex & { _httpMessage?: ServerResponse | null })._httpMessage;
    // Whatever it answers, the connection is ended or closed below: an answer whose head is not
    // written yet reaches no one (unless its request is answered here, answeredPastResponse).
    if (serving && !serving.headersSent) cutOffBeforeItsHead(serving);
    // Bytes of an answer written into another answer under way would corrupt both (Node's own
    // handler writes nothing then either).
    if (error.code === 'ECONNRESET' || !socket.writable || serving?.headersSent) {
      socket.destroy();
      return;
    }
    const { status, detail } = (error.code && ANSWERS[error.code]) || MALFORMED;
    logger.debug?.(`client error ${error.code ?? 'unknown'}: ${status}`, 'HttpServer');
    const id = idOf(serving?.req);
    // A body too slow to arrive, or one the parser cannot read (a bad chunk size): the client is
    // there to read the answer, so its request's log line and metrics say so, not that it was cut
    // off. A client that closed mid-body (HPE_INVALID_EOF_STATE) left before any answer, and
    // stays counted as such.
    if (id !== undefined && error.code !== 'HPE_INVALID_EOF_STATE')
      answeredPastResponse(serving!, status);
    answerOnSocket(socket, status, detail, {}, !isHead(error), id);
  });
  server.on('checkExpectation', (request, response) => server.emit('request', request, response));
  const bodyLimitBytes = bytesOf(limits.bodyLimit);
  server.on('checkContinue', (request: IncomingMessage, response: ServerResponse) => {
    if (!declaresBodyOver(request, bodyLimitBytes)) response.writeContinue();
    server.emit('request', request, response);
  });
  server.on('connect', (request: IncomingMessage, socket: Duplex) => {
    // Node hands the socket over without its listeners: a reset must not crash us, and a client
    // that keeps its side open after the answer must not keep the socket (allowHalfOpen).
    socket.on('error', () => socket.destroy());
    const linger = setTimeout(() => socket.destroy(), CONNECT_LINGER_MS).unref();
    socket.once('close', () => clearTimeout(linger));
    const path = request.url?.startsWith('/') ? request.url.split('?')[0] : undefined;
    const allowed = path === undefined ? [] : allowedMethods(path);
    logger.debug?.(`CONNECT answered ${allowed.length > 0 ? 405 : 404}`, 'HttpServer');
    if (allowed.length > 0)
      answerOnSocket(socket, 405, ERROR_DETAILS.methodNotAllowed, { Allow: allowed.join(', ') });
    else answerOnSocket(socket, 404, ERROR_DETAILS.notFound);
  });
}

/** Writes a whole answer in the documented shape on a socket Node no longer serves, and closes it. */
function answerOnSocket(
  socket: Duplex,
  status: number,
  detail: string,
  headers: Record<string, string> = {},
  withBody = true,
  id: string = randomUUID(),
): void {
  const body = JSON.stringify({ detail, request_id: id });
  socket.end(
    `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\n` +
      'Content-Type: application/json; charset=utf-8\r\n' +
      `Content-Length: ${Buffer.byteLength(body)}\r\n` +
      Object.entries(headers)
        .map(([name, value]) => `${name}: ${value}\r\n`)
        .join('') +
      `X-Request-Id: ${id}\r\n` +
      'Connection: close\r\n\r\n' +
      (withBody ? body : ''),
  );
}

/**
 * The id the request was given (requestLogging) once Express saw it, as its log line and its
 * `X-Request-Id` name it: a body too slow to arrive is answered under the request's own id (it
 * was a fresh one, which matched nothing the client or the log had; an audit's finding).
 */
function idOf(request: IncomingMessage | undefined): string | undefined {
  // Only while it is still being received: a request received whole is an earlier one on the
  // socket, whose handling goes on, and a pipelined request after it is what failed.
  const id: unknown = request && !request.complete ? request.id : undefined;
  return typeof id === 'string' ? id : undefined;
}

/**
 * Whether the refused request is a HEAD, whose answer has headers only (a body after them breaks
 * the client's parser). The parser's error carries the bytes it was reading; they start with
 * the request line when the request came in one piece, as almost all do. When they do not,
 * the body is sent, as before.
 */
function isHead(error: NodeJS.ErrnoException & { rawPacket?: Buffer }): boolean {
  return error.rawPacket?.subarray(0, 5).toString('latin1') === 'HEAD ';
}
