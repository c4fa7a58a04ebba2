import type { IncomingMessage, ServerResponse } from 'node:http';

/** How long a closing connection's body is still read after its answer. */
export const LINGER_MS = 2_000;
/** How much of a body left unread is read (and dropped) at most, before its answer and after. */
export const LINGER_BYTES = 4 * 1024 * 1024;

/**
 * Answers `request`, whose body is not read, with `Connection: close`, and closes the connection
 * as nginx's lingering_close does: once the answer is written, the server ends its side and
 * reads and drops what the client still sends, and closes when the body has all come, or the
 * client has closed, or at LINGER_BYTES of it, or LINGER_MS after the answer. Node closed it as
 * soon as the answer was written, with bytes of the body unread, so the kernel reset it, and a
 * client still uploading (one that sends no `Expect: 100-continue`: Node's fetch, Python's
 * http.client) had EPIPE or ECONNRESET in place of the answer (a fuzz audit's finding). Both
 * bounds keep what the body's refusal unread was for (docs/decisions.md, "Secrets in logs and
 * error bodies"): a body over them is cut off, by a reset, as before, and a client without a key
 * holds the socket for 2 s at most.
 *
 * Node ends such a connection by `socket.destroySoon()` once the answer is written (http's
 * `resOnFinish`): that call is where the lingering begins. The body is read from the start, for
 * Node would otherwise drop it unseen (`_dump`), uncounted; past LINGER_BYTES before the answer,
 * it is paused, and the connection reset with the answer.
 */
export function closeAfterAnswer(request: IncomingMessage, response: ServerResponse): void {
  response.setHeader('Connection', 'close');
  const { socket } = request;
  let read = 0;
  let answered = false;
  request.on('data', (chunk: Buffer) => {
    read += chunk.length;
    if (read <= LINGER_BYTES) return;
    if (answered) socket.destroy();
    else request.pause();
  });
  const close = socket.destroySoon.bind(socket);
  socket.destroySoon = () => {
    answered = true;
    // All of it read (nothing left to reset with), or too much: closed as Node closes it.
    if (request.complete || read > LINGER_BYTES) return close();
    socket.end();
    const linger = setTimeout(() => socket.destroy(), LINGER_MS).unref();
    socket.once('close', () => clearTimeout(linger));
    // Once the whole body is read, closed when the answer's last bytes are out.
    request.once('end', close);
    request.resume();
  };
}
