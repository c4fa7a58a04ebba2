import {
  BadRequestException,
  CanActivate,
  ExecutionContext,
  Inject,
  Injectable,
} from '@nestjs/common';
import type { Request } from 'express';
import { AuthenticatedRequest } from '../auth/api-key-principal';
import { ERROR_DETAILS } from '../errors/error-details';
import { LOGGING_SETTINGS, LoggingSettings } from '../logging/logging.module';
import { redactUrl } from '../logging/redact-url';
import { SecretScanner } from '../security/secret-scanner';
import { carriesSecret, refusalWarnings } from './refuse-misplaced-secrets';

/**
 * Refuses with a 400 a request that carries a secret outside the X-API-Key and Authorization
 * headers: an issued key in its body, or a secret known in clear (the master key, the tokens,
 * SUBTENSOR_URL's credentials) anywhere; issued keys in the URL were refused before routing
 * (refuse-misplaced-secrets.ts). The last global guard: it runs once the
 * key is authenticated, its request charged to its budget and its privilege checked, so that a
 * request without a valid key gets its 401 first (a failure towards its address's lockout) and
 * every 400 is a request of a known key, counted; and before the validation pipe and the
 * handler, so that nothing of the request is stored.
 */
@Injectable()
export class MisplacedSecretGuard implements CanActivate {
  /** The master key's requests are charged to no budget: its refusals could flood the log too. */
  private readonly warnings = refusalWarnings();
  private readonly scanner: SecretScanner;

  constructor(@Inject(LOGGING_SETTINGS) settings: LoggingSettings) {
    this.scanner = settings.scanner;
  }

  canActivate(context: ExecutionContext): boolean {
    const request = context.switchToHttp().getRequest<Request & AuthenticatedRequest>();
    // Let in by the metrics token, not a key: /metrics reads nothing of the request and is
    // charged to no budget, so the check would only answer the token's holder guesses at the
    // other secrets, without limit.
    if (!request.apiKey) return true;
    const url = request.originalUrl;
    if (!carriesSecret(url, request.body, this.scanner)) return true;
    this.warnings.warn(`${request.method} ${redactUrl(url, this.scanner)}`);
    throw new BadRequestException(ERROR_DETAILS.misplacedSecret);
  }
}
