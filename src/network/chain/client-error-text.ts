/**
 * What the chain client's failure says. It rejects with an Error, or with the socket's error
 * event (whose `message` is its error's), and in one full test run a refused connection came
 * back with no message at all: the operator then read "could not connect: " and nothing. So an
 * empty message falls back to the event's error, an AggregateError's errors, the event's type
 * and close code, and last to saying that no reason was given.
 */
export function clientErrorText(error: unknown): string {
  const failure = (error ?? {}) as {
    message?: unknown;
    error?: unknown;
    errors?: unknown;
    type?: unknown;
    code?: unknown;
  };
  if (typeof failure.message === 'string' && failure.message) return failure.message;
  if (failure.error instanceof Error && failure.error.message) return failure.error.message;
  if (Array.isArray(failure.errors)) {
    const messages = failure.errors.map(clientErrorText).filter(Boolean);
    if (messages.length) return messages.join('; ');
  }
  if (typeof failure.code === 'string' && failure.code) return failure.code;
  if (typeof failure.type === 'string' && failure.type)
    return `${failure.type} on the socket${typeof failure.code === 'number' ? ` (code ${failure.code})` : ''}, no reason given`;
  return 'no reason given';
}
