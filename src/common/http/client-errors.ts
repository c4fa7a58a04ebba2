import { randomUUID } from 'node:crypto';
import { IncomingMessage, METHODS, ServerResponse, STATUS_CODES, Server } from 'node:http';
import type { Duplex } from 'node:stream';
import { LoggerService } from '@nestjs/common';
import type { Logger } from 'pino';
import type { AllowedMethods } from '../errors/all-exceptions.filter';
import { ERROR_DETAILS } from '../errors/error-details';
import { MetricsService, UNMATCHED_ROUTE } from '../metrics/metrics.service';
import { answeredPastResponse, cutOffBeforeItsHead } from '../response-done';
import { bytesOf } from './body-limit';
import { corsHeadersOf } from './cors';
import { declaresBodyOver } from './json-bodies';
import { API_SECURITY_HEADERS } from './security-headers';

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
/**
 * An answer written on the socket to a request the app never had (its parser refused it, or a
 * CONNECT): the request's line in the log and its count, as every answered request has.
 */
export interface SocketAnswer {
  /** The request id the answer carries (body and `X-Request-Id`). */
  id: string;
  /** The request's method when one Node knows was read, else `other`: a bounded label. */
  method: string;
  /** Null when the client had ended its side mid-request (HPE_INVALID_EOF_STATE): it left. */
  status: number | null;
  /** The parser's error code (`HPE_HEADER_OVERFLOW`); none for a CONNECT. */
  parserError?: string;
}

/** How long a CONNECT's socket stays open after its answer for the client to read it and close. */
const CONNECT_LINGER_MS = 5_000;

/**
 * What Node's HTTP server would answer by itself, with an empty body and no request id, is
 * answered in the documented shape, `{"detail", "request_id"}`, or handed to the app:
 * - errors of its parser (a malformed request line, oversized headers, a client too slow to
 *   send its request), before Express sees the request: the status Node would have used, and
 *   the connection closed. The answer is logged and counted (`recordAnswer`) with its request
 *   id, status and the parser's code, and the method when it is one Node knows; nothing else of
 *   the request is echoed or logged (its headers may hold secrets);
 * - an HTTP/1.1 request without `Host` (RFC 9112: a 400): left to the app (`requireHost`), so
 *   that its 400 is logged and counted like any other answer;
 * - an `Expect` other than `100-continue`: Node answered 417, a status no operation has; RFC
 *   9110 lets a server ignore an expectation it does not know (it MAY answer 417), so the
 *   request is handled as any other;
 * - `Expect: 100-continue`: Node sent `100 Continue` at once, and the client its body. A body
 *   declared over BODY_LIMIT, which jsonBodies refuses unread, gets no `100`: the client hears
 *   its 413 without sending the body (RFC 9110 lets a server answer without the `100`);
 * - `CONNECT`: Node closed the connection without a word. It is answered as any method a path
 *   lacks: 405 with `Allow` on a known path, else 404 (a proxy's `host:port` is no path here),
 *   logged and counted as the parser's errors are.
 */
export function answerClientErrors(
  server: Server,
  limits: HttpServerLimits,
  logger: LoggerService,
  allowedMethods: AllowedMethods,
  recordAnswer: (answer: SocketAnswer) => void,
): void {
  // No count of headers: Node's default dropped every header past the 1000th without a word, an
  // X-API-Key or a proxy's X-Forwarded-For at the end among them (an HTTP audit). The 16 KB of
  // the request's head (a 431) bound them.
  server.maxHeadersCount = 0;
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
  const answerClientError = (error: NodeJS.ErrnoException, socket: Duplex): void => {
    // The request the socket was serving, if the parser got that far (a slow body, a pipelined
    // request's error): its answer may be under way, and it has its id.
    const serving = (socket as Duplex & { _httpMessage?: ServerResponse | null })._httpMessage;
    // A request read whole before the one that failed (pipelined in the same write) is being
    // handled: its answer is sent first, as HTTP/1.1's order asks, and this one's after it. Cut
    // off, the client read the 400 as its POST's answer while the key it created was lost
    // (an HTTP audit).
    if (serving?.req?.complete && isParserError(error)) {
      // Bytes arriving meanwhile meet the failed parser again, and Node reports each time: one
      // answer is enough.
      if (waitingToAnswer.has(socket)) return;
      waitingToAnswer.add(socket);
      afterOwedAnswers(socket, () => answerClientError(error, socket));
      return;
    }
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
    const parserError = error.code ?? 'unknown';
    const method = methodOf(error);
    // A client that ended its side mid-request (mid-body, or mid-headers) left before any answer,
    // and is counted as such.
    const left = error.code === 'HPE_INVALID_EOF_STATE';
    const served = idOf(serving?.req);
    const id = served ?? randomUUID();
    // The app had the request: its origin's CORS headers are on the response it was serving.
    const cors = served === undefined ? {} : corsHeadersOf(serving!);
    answerOnSocket(socket, status, detail, cors, id, method !== 'HEAD');
    if (served !== undefined) {
      // A body too slow to arrive, or one the parser cannot read (a bad chunk size): the client
      // is there to read the answer, so its request's own line and count say so, not that it was
      // cut off.
      logger.debug?.(`client error ${parserError}: ${status}`, 'HttpServer');
      if (!left) answeredPastResponse(serving!, status);
      return;
    }
    // A request the app never had has no line of its own: this is it (a review's finding: the
    // client was given an id no log line carried, and the answer was in no count).
    recordAnswer({ id, method, status: left ? null : status, parserError });
  };
  server.on('clientError', answerClientError);
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
    const id = randomUUID();
    const known = allowed.length > 0;
    const status = known ? 405 : 404;
    const detail = known ? ERROR_DETAILS.methodNotAllowed : ERROR_DETAILS.notFound;
    answerOnSocket(socket, status, detail, known ? { Allow: allowed.join(', ') } : {}, id);
    recordAnswer({ id, method: 'CONNECT', status });
  });
}

/**
 * Logs each SocketAnswer as its request's line, at info as every request's line is (a client's
 * error, like the app's own 400s: a warning per malformed request would let any scanner fill
 * the warnings an operator watches; the count is what to alert on), and counts it under
 * `route="unmatched"` (no route was matched): in `gateway_http_requests_total`, or, for a client
 * that left mid-request, `gateway_http_requests_unanswered_total`. Not in the duration histogram:
 * when the request began is not known (its bytes may have come over seconds, on a connection
 * that served others). The line holds only the id (a checked or generated one), a known method
 * or `other`, the status and Node's error code, never the request's bytes (its headers may hold
 * secrets): like the app's request lines, it skips the secret scan.
 */
export function socketAnswerRecorder(
  requestLines: Logger,
  metrics: MetricsService,
): (answer: SocketAnswer) => void {
  return ({ id, method, status, parserError }) => {
    if (status === null) metrics.recordUnansweredRequest(method, UNMATCHED_ROUTE);
    else metrics.recordAnswerBeforeRouting(method, status);
    const why =
      parserError === undefined
        ? 'answered before routing'
        : status === null
          ? `closed before the request was complete (${parserError})`
          : `refused by the HTTP parser (${parserError})`;
    requestLines.info(
      { req: { id, method }, res: { statusCode: status }, parser_error: parserError },
      `${method} ${status ?? '-'} ${why}`,
    );
  };
}

/**
 * An error of the request parser (or its timeouts), which leaves the socket able to send what it
 * owes; a socket error (EPIPE, ETIMEDOUT) is the connection itself gone.
 */
function isParserError(error: NodeJS.ErrnoException): boolean {
  return error.code?.startsWith('HPE_') === true || error.code === 'ERR_HTTP_REQUEST_TIMEOUT';
}

/** Sockets whose parser failed after requests it read whole: their answers go out first. */
const waitingToAnswer = new WeakSet<Duplex>();

/**
 * Calls `then` once the socket has sent the answers of the requests read before its parser
 * failed: Node hands the socket to each queued answer in turn as the one before finishes. Never,
 * when the connection closes first (nothing is left to answer on it).
 */
function afterOwedAnswers(socket: Duplex, then: () => void): void {
  const serving = (socket as Duplex & { _httpMessage?: ServerResponse | null })._httpMessage;
  if (!serving?.req?.complete) return then();
  // Node's own 'finish' listener, added first, has handed the socket on by the time this runs.
  serving.once('finish', () => afterOwedAnswers(socket, then));
}

/**
 * Writes a whole answer in the documented shape on a socket Node no longer serves, and closes it,
 * with the security headers and the Date every other answer has.
 */
function answerOnSocket(
  socket: Duplex,
  status: number,
  detail: string,
  headers: Record<string, string>,
  id: string,
  withBody = true,
): void {
  const body = JSON.stringify({ detail, request_id: id });
  socket.end(
    `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\n` +
      'Content-Type: application/json; charset=utf-8\r\n' +
      `Content-Length: ${Buffer.byteLength(body)}\r\n` +
      `Date: ${new Date().toUTCString()}\r\n` +
      Object.entries({ ...API_SECURITY_HEADERS, ...headers })
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
 * The refused request's method, when it is one Node knows, else `other` (an unknown one, or
 * none read): a label, so a bounded set. The parser's error carries the bytes it was reading;
 * they start with the request line when the request came in one piece, as almost all do. A HEAD
 * is answered with headers only (a body after them breaks the client's parser); one not known
 * for one gets the body, as before.
 */
function methodOf(error: NodeJS.ErrnoException & { rawPacket?: Buffer }): string {
  const start = error.rawPacket?.subarray(0, LONGEST_METHOD + 1).toString('latin1') ?? '';
  const method = /^([A-Z-]+) /.exec(start)?.[1];
  return method !== undefined && METHODS.includes(method) ? method : 'other';
}
const LONGEST_METHOD = Math.max(...METHODS.map((method) => method.length));
