import type { Request, Response } from 'express';
import { attachSecretScanner, secretScannerFor } from '../security/secrets';
import { sendError } from './error-body';

const MASTER_KEY = 'master-key-for-the-error-body-0123';
const ISSUED_KEY = `sk_live_${'Q'.repeat(43)}`;

/** A request of an app whose scanner knows the master key, and a response that keeps its body. */
function exchange() {
  const locals: Record<string, unknown> = {};
  attachSecretScanner(locals, secretScannerFor({ masterKey: MASTER_KEY }));
  const request = { id: 'request-1', app: { locals } } as unknown as Request;
  const sent: { status?: number; body?: unknown } = {};
  const headers = new Map<string, string>();
  const response = {
    setHeader: (name: string, value: string) => headers.set(name.toLowerCase(), value),
    removeHeader: (name: string) => headers.delete(name.toLowerCase()),
    status: (status: number) => {
      sent.status = status;
      return response;
    },
    json: (body: unknown) => {
      sent.body = body;
      return response;
    },
  } as unknown as Response;
  return { request, response, sent, headers };
}

describe(sendError.name, () => {
  // Key management sets `no-store` before its pipes run: a 422 kept it, which the document
  // does not list on errors (the contract check caught it).
  it('drops a cache directive set for the success: no error answer carries one', () => {
    const { request, response, sent, headers } = exchange();
    response.setHeader('Cache-Control', 'no-store');
    response.setHeader('X-Request-Id', 'request-1');
    sendError(request, response, 422, { detail: [] });
    expect(sent.status).toBe(422);
    expect([...headers.keys()]).toEqual(['x-request-id']);
  });

  it('redacts secrets an error text quotes, wherever in the detail, and keeps the rest', () => {
    // Error texts may quote what the client sent (an id, a parser's message); a secret in them
    // is the client's own, yet the body may be logged or shown on its way back.
    const { request, response, sent } = exchange();
    const quoted = `Unexpected token 'x', "${ISSUED_KEY}" is not valid JSON`;
    sendError(request, response, 422, {
      detail: [
        {
          loc: ['body', 9],
          msg: 'JSON decode error',
          type: 'json_invalid',
          ctx: { error: quoted, [MASTER_KEY]: `as sent: ${MASTER_KEY}` },
        },
      ],
    });
    expect(sent).toEqual({
      status: 422,
      body: {
        detail: [
          {
            loc: ['body', 9],
            msg: 'JSON decode error',
            type: 'json_invalid',
            ctx: {
              error: `Unexpected token 'x', "[redacted]" is not valid JSON`,
              '[redacted]': 'as sent: [redacted]',
            },
          },
        ],
        request_id: 'request-1',
      },
    });
  });
});
