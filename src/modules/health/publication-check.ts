import { PublicationService } from '../publication/publication.service';
import { PublicationComponentStatusDto } from './dto/system-status.dto';
import { inTime } from './timed-check';

/** A failed publication is retried on its own: `degraded` until an attempt succeeds. */
export async function publicationStatus(
  publication: PublicationService,
): Promise<PublicationComponentStatusDto> {
  try {
    const status = await inTime(publication.status());
    return {
      status:
        status.state === 'disabled'
          ? 'disabled'
          : status.state === 'failed'
            ? 'degraded'
            : 'healthy',
      latency_ms: null,
      state: status.state,
      ...(status.commit_sha ? { commit_sha: status.commit_sha } : {}),
      ...(status.block_number !== undefined ? { block_number: status.block_number } : {}),
      ...(status.next_attempt_at ? { next_attempt_at: status.next_attempt_at } : {}),
      ...(status.last_error ? { error: status.last_error } : {}),
    };
  } catch (error) {
    return {
      status: 'degraded',
      latency_ms: null,
      state: 'pending',
      error: `publication state unreadable: ${(error as Error).message}`,
    };
  }
}
