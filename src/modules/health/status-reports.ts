import { API_VERSION } from '../../common/version';
import { HealthResponseDto } from './dto/health-response.dto';
import {
  ChainStatusDto,
  ComponentStatusDto,
  MinerIndexStatusDto,
  MinersStatusDto,
  Network,
  PublicationComponentStatusDto,
  SystemStatusDto,
} from './dto/system-status.dto';

/** What health and system-status share; Redis is system-status' alone (its own check). */
interface ComponentChecks {
  database: ComponentStatusDto;
  miners: MinersStatusDto;
  chain: ChainStatusDto;
  publication: PublicationComponentStatusDto;
}

export interface Checks {
  components: ComponentChecks;
  network: Network | null;
  /** Why the database check failed, as health may say it to any key (health-reason.ts). */
  databaseReason?: string;
}

/** What system-status alone reports, checked apart from what health shares (HealthService). */
export interface StatusOnlyChecks {
  redis: ComponentStatusDto;
  minerIndex: MinerIndexStatusDto;
}

/** Healthy while the database answers: the other components degrade serving, never stop it. */
export function healthReport(
  { components, network, databaseReason }: Checks,
  netuid: number,
  hotkey: string,
  now: Date,
): HealthResponseDto {
  const healthy = components.database.status === 'healthy';
  return {
    status: healthy ? 'healthy' : 'unhealthy',
    timestamp: now.toISOString(),
    miners_available: components.miners.available,
    version: API_VERSION,
    netuid,
    hotkey,
    network,
    // Only when unhealthy: a balancer's 503 log then says which check failed.
    ...(!healthy && databaseReason ? { reason: databaseReason } : {}),
  };
}

/**
 * Unhealthy without the database; degraded when any other component is (a miner index that is
 * not loaded too: docs/decisions.md, "Health"). `startedAt` is performance.now() at start (a
 * monotonic clock: docs/decisions.md, "Clocks").
 */
export function systemStatusReport(
  checks: Checks,
  { redis, minerIndex }: StatusOnlyChecks,
  startedAt: number,
  now: Date,
): SystemStatusDto {
  const { network } = checks;
  const { database, miners, chain, publication } = checks.components;
  const components = { database, redis, miners, miner_index: minerIndex, chain, publication };
  const degraded =
    components.redis.status === 'degraded' ||
    components.miners.status !== 'healthy' ||
    components.miner_index.status !== 'healthy' ||
    components.chain.status === 'degraded' ||
    components.publication.status === 'degraded';
  return {
    status:
      components.database.status !== 'healthy' ? 'unhealthy' : degraded ? 'degraded' : 'healthy',
    timestamp: now.toISOString(),
    uptime_seconds: Math.round((performance.now() - startedAt) / 1000),
    version: API_VERSION,
    network,
    components,
  };
}
