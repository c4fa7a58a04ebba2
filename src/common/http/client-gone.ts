import type { ServerResponse } from 'node:http';
import { createParamDecorator, ExecutionContext, HttpException, Logger } from '@nestjs/common';
import { whenResponseDone } from '../response-done';

/**
 * What a change whose connection closed before it was stored is answered with: nothing reaches
 * the client, and the request's line says `closed before the answer was complete`. Not a 500:
 * no fault of ours, and no stack in the log.
 */
export class ClientGoneException extends HttpException {
  constructor() {
    super({ detail: 'The client left before the change was stored; it was not made' }, 499);
  }
}

/**
 * A signal aborted once the request's connection has closed before its answer was sent: the
 * client timed out or its connection broke (or the shutdown's drain cut it). Made when a handler
 * asks for it, after the guards: a connection closed before then (a client that gave up while
 * its key was looked up) has sent its `close` already, and is aborted at once (a review's
 * finding: such a vote was stored).
 */
export function clientGoneSignal(response: ServerResponse): AbortSignal {
  if (response.req.socket.destroyed) return AbortSignal.abort(new ClientGoneException());
  const controller = new AbortController();
  whenResponseDone(response, (answered) => {
    if (!answered) controller.abort(new ClientGoneException());
  });
  return controller.signal;
}

/** The request's clientGoneSignal, for a route that makes a change (see stillWanted). */
export const ClientGone = createParamDecorator(
  (_data: unknown, context: ExecutionContext): AbortSignal =>
    clientGoneSignal(context.switchToHttp().getResponse<ServerResponse>()),
);

const logger = new Logger('ClientGone');

/**
 * Called in a change's transaction, last before it commits: throws ClientGoneException, which
 * rolls the change back, when its connection has closed. A client that timed out and sent a
 * newer change (a corrected vote, another limit) must not have the one it gave up on land after
 * it and replace it: a write held up (a database slow to answer, a lock) went on after its
 * client had gone, and overwrote the newer one (a retry audit). What commits was still awaited
 * then; a client leaving after the check (a commit that stalls in the database) finds the change
 * made, as a retry of it does.
 */
export function stillWanted(gone: AbortSignal | undefined, change: string): void {
  if (!gone?.aborted) return;
  logger.warn(`not made, its connection closed before it was stored: ${change}`);
  throw gone.reason;
}
