import { createParamDecorator, ExecutionContext } from '@nestjs/common';
import type { Request } from 'express';

/** The `data` RequestValidationPipe knows a `@RequestHeaders()` parameter by. */
export const REQUEST_HEADERS = 'header';

const requestHeaders = createParamDecorator(
  (_data: unknown, context: ExecutionContext) =>
    context.switchToHttp().getRequest<Request>().headers,
);

/**
 * The request's headers as a DTO whose fields are their names in lower case (as Node hands
 * them over), validated by RequestValidationPipe as `@Query()` is: a failing header is a 422
 * at `["header", name]`, as FastAPI answers a `Header()` parameter. Nest's own `@Headers()`
 * runs no pipe, so a bound the document gives a header would not be held.
 */
export const RequestHeaders = (): ParameterDecorator => requestHeaders(REQUEST_HEADERS);
