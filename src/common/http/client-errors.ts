import { randomUUID } from 'node:crypto';
import { STATUS_CODES, Server } from 'node:http';
import type { Duplex } from 'node:stream';
import { LoggerService } from '@nestjs/common';
import { ERROR_DETAILS } from '../errors/error-details';

export interface HttpServerLimits {
  /** Time a client has to send the request headers. */
  headersTimeoutMs: number;
  /** Time a client has to send the whole request (a slow body included). */
  requestTimeoutMs: number;
}

/** Node's parser errors, by code: what they mean to the client. */
const ANSWERS: Record<string, { status: number; detail: string }> = {
  HPE_HEADER_OVERFLOW: { status: 431, detail: ERROR_DETAILS.headersTooLarge },
  ERR_HTTP_REQUEST_TIMEOUT: { status: 408, detail: ERROR_DETAILS.requestTimeout },
  ERR_HTTP_HEADERS_TIMEOUT: { status: 408, detail: ERROR_DETAILS.headersTimeout },
};
const MALFORMED = { status: 400, detail: ERROR_DETAILS.malformedRequest };

/**
 * Errors raised by Node's HTTP parser (a malformed request line, oversized headers, a client
 * too slow to send its request) happen before Express sees the request, and Node answers them
 * with an empty body. This answers them in the documented shape, `{"detail", "request_id"}`,
 * with the status Node would have used, and closes the connection. Nothing of the request is
 * echoed or logged (only the parser's error code).
 */
export function answerClientErrors(
  server: Server,
  limits: HttpServerLimits,
  logger: LoggerService,
): void {
  server.headersTimeout = limits.headersTimeoutMs;
  server.requestTimeout = limits.requestTimeoutMs;
  // Node checks those timeouts on an interval (30 s by default, read when the server starts
  // listening): once a second, a slow client is cut off within a second of its limit.
  (server as Server & { connectionsCheckingInterval: number }).connectionsCheckingInterval = 1000;
  server.on('clientError', (error: NodeJS.ErrnoException, socket: Duplex) => {
    if (error.code === 'ECONNRESET' || !socket.writable) {
      socket.destroy();
      return;
    }
    const { status, detail } = (error.code && ANSWERS[error.code]) || MALFORMED;
    const id = randomUUID();
    const body = JSON.stringify({ detail, request_id: id });
    logger.debug?.(`client error ${error.code ?? 'unknown'}: ${status}`, 'HttpServer');
    socket.end(
      `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\n` +
        'Content-Type: application/json; charset=utf-8\r\n' +
        `Content-Length: ${Buffer.byteLength(body)}\r\n` +
        `X-Request-Id: ${id}\r\n` +
        'Connection: close\r\n\r\n' +
        (isHead(error) ? '' : body),
    );
  });
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
