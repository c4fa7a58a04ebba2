import { createParamDecorator, ExecutionContext } from '@nestjs/common';
import { AuthenticatedRequest } from './api-key-principal';

/**
 * The id of the principal ApiKeyGuard admitted (a key's id as listed, or `master`): who made a
 * change, for its audit line. Only the metrics token admits no principal, on /metrics alone.
 */
export const PrincipalId = createParamDecorator(
  (_data: unknown, context: ExecutionContext): string =>
    context.switchToHttp().getRequest<AuthenticatedRequest>().apiKey?.id ?? 'unknown',
);
