import type { Request, Response } from 'express';
import { bodyParserErrorHandler } from './body-parser-errors';
import { ERROR_DETAILS } from './error-details';

/** What the handler answers to a parser's error of `type` and `status`. */
function answerTo(type: string, status: number) {
  const request = { id: 'request-1' } as unknown as Request;
  const sent: { status?: number; body?: unknown } = {};
  const response = {
    removeHeader: () => undefined,
    status: (code: number) => {
      sent.status = code;
      return response;
    },
    json: (body: unknown) => {
      sent.body = body;
      return response;
    },
  } as unknown as Response;
  const error = Object.assign(new Error(type), { type, status });
  bodyParserErrorHandler(error, request, response, () => undefined);
  return sent;
}

describe(bodyParserErrorHandler.name, () => {
  it('answers an oversized body with a 413 and an unsupported charset with a 415', () => {
    expect(answerTo('entity.too.large', 413)).toEqual({
      status: 413,
      body: { detail: ERROR_DETAILS.bodyTooLarge, request_id: 'request-1' },
    });
    // body-parser's own charset check (jsonBodies refuses other charsets first, as encodings).
    expect(answerTo('charset.unsupported', 415)).toEqual({
      status: 415,
      body: { detail: ERROR_DETAILS.unsupportedEncoding, request_id: 'request-1' },
    });
  });

  it('answers any other client error of the parser with its status, as a malformed body', () => {
    // A body shorter than its Content-Length (request.size.invalid), a failed check (403).
    for (const [type, status] of [
      ['request.size.invalid', 400],
      ['entity.verify.failed', 403],
    ] as const)
      expect(answerTo(type, status)).toEqual({
        status,
        body: { detail: ERROR_DETAILS.malformedBody, request_id: 'request-1' },
      });
  });

  it("answers the parser's own failures with a 400, not a 5xx the client could retry", () => {
    // Only the client's body can fail the parser here; a 500 would read as the server's fault.
    expect(answerTo('stream.encoding.set', 500)).toMatchObject({ status: 400 });
  });
});
