import {
  allowedMethods,
  isOutsideTheDocument,
  matchOperation,
  Operation,
  responseProblems,
  unroutedProblems,
} from '../openapi';
import { RawRequest, RawResponse } from './send';

/**
 * What every answer must satisfy, whatever was sent: no 5xx, an X-Request-Id, 4xx bodies in
 * the documented error shape, and, for a routed request, a status the operation documents and
 * a body valid against its schema in /openapi.json. Returns the violations (none = passed).
 */
export function checkResponse(
  operations: readonly Operation[],
  request: RawRequest,
  response: RawResponse,
): string[] {
  const problems: string[] = [];
  const { status } = response;
  if (status >= 500) problems.push(`status ${status}`);
  if (!response.headers['x-request-id']) problems.push('no X-Request-Id header');
  const hasBody = request.method !== 'HEAD';
  const isJson = /^application\/json\b/i.test(response.headers['content-type'] ?? '');
  const body = isJson && hasBody ? parseJson(response.body) : undefined;
  if (isJson && hasBody && body === undefined) problems.push('JSON content type, unparsable body');
  if (status >= 400 && hasBody) problems.push(...errorShapeProblems(body));

  const pathname = request.path.split('?')[0];
  if (isOutsideTheDocument(pathname)) return problems;
  const operation = matchOperation(operations, request.method, pathname);
  const answer = { method: request.method, status, headers: response.headers, body };
  if (!operation)
    return [...problems, ...unroutedProblems(answer, allowedMethods(operations, pathname))];
  problems.push(...responseProblems(operation, answer));
  return problems;
}

/** `{detail: string}` or the 422 list `{detail: [{loc, msg, type, ...}]}`; extra keys allowed. */
function errorShapeProblems(body: unknown): string[] {
  if (typeof body !== 'object' || body === null || !('detail' in body)) {
    return ['a 4xx without a JSON `detail` body'];
  }
  const { detail } = body;
  if (typeof detail === 'string') return [];
  if (!Array.isArray(detail) || detail.length === 0) return ['`detail` neither text nor a list'];
  const bad = detail.filter(
    (item: { loc?: unknown; msg?: unknown; type?: unknown }) =>
      !Array.isArray(item?.loc) ||
      !item.loc.every((part) => typeof part === 'string' || Number.isInteger(part)) ||
      typeof item.msg !== 'string' ||
      typeof item.type !== 'string',
  );
  return bad.length > 0 ? [`422 items without loc/msg/type: ${JSON.stringify(bad[0])}`] : [];
}

function parseJson(body: Buffer): unknown {
  try {
    return JSON.parse(body.toString('utf8')) as unknown;
  } catch {
    return undefined;
  }
}
