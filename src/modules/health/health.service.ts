import { Injectable } from '@nestjs/common';
import { LRUCache } from 'lru-cache';
import { RedisConnection } from '../../common/redis/redis-connection';
import { API_VERSION } from '../../common/version';
import { AppConfig } from '../../config/app-config';
import { InjectConfig } from '../../config/config.module';
import { ValidatorIdentity } from '../../network/bittensor/validator-identity';
import { NetworkService } from '../../network/network.service';
import { HealthResponseDto } from './dto/health-response.dto';
import { ComponentStatusDto, MinersStatusDto, SystemStatusDto } from './dto/system-status.dto';
import { HealthRepository } from './health.repository';

const CHECK_CACHE_MS = 1000;
const CHECK_TIMEOUT_MS = 1000;

interface ComponentChecks {
  database: ComponentStatusDto;
  redis: ComponentStatusDto;
  miners: MinersStatusDto;
}

@Injectable()
export class HealthService {
  private readonly startedAt = Date.now();
  /** Health may be polled hard: checks run at most once a second, concurrent polls share one. */
  private readonly checks = new LRUCache<'checks', ComponentChecks>({
    max: 1,
    ttl: CHECK_CACHE_MS,
    fetchMethod: () => this.runChecks(),
  });

  constructor(
    private readonly repository: HealthRepository,
    private readonly network: NetworkService,
    private readonly redis: RedisConnection,
    private readonly identity: ValidatorIdentity,
    @InjectConfig() private readonly config: AppConfig,
  ) {}

  async health(): Promise<HealthResponseDto> {
    const checks = await this.componentChecks();
    return {
      status: checks.database.status === 'healthy' ? 'healthy' : 'unhealthy',
      timestamp: new Date().toISOString(),
      miners_available: checks.miners.available,
      version: API_VERSION,
      netuid: this.config.netuid,
      hotkey: this.identity.hotkey,
    };
  }

  async systemStatus(): Promise<SystemStatusDto> {
    const checks = await this.componentChecks();
    const degraded = checks.redis.status === 'degraded' || checks.miners.status !== 'healthy';
    return {
      status:
        checks.database.status !== 'healthy' ? 'unhealthy' : degraded ? 'degraded' : 'healthy',
      timestamp: new Date().toISOString(),
      uptime_seconds: Math.round((Date.now() - this.startedAt) / 1000),
      version: API_VERSION,
      components: checks,
    };
  }

  private async componentChecks(): Promise<ComponentChecks> {
    return (await this.checks.fetch('checks'))!;
  }

  private async runChecks(): Promise<ComponentChecks> {
    const [database, redis, miners] = await Promise.all([
      timed(() => this.repository.ping()),
      this.checkRedis(),
      this.checkMiners(),
    ]);
    return { database, redis, miners };
  }

  /**
   * Redis is optional to serving (rate limits and the cache fall back to this process), so an
   * unreachable Redis is `degraded`, never `unhealthy`.
   */
  private async checkRedis(): Promise<ComponentStatusDto> {
    const client = this.redis.client;
    if (!client) return { status: 'disabled', latency_ms: null };
    if (!this.redis.ready())
      return { status: 'degraded', latency_ms: null, error: `not connected (${client.status})` };
    const result = await timed(() => client.ping());
    return result.status === 'healthy' ? result : { ...result, status: 'degraded' };
  }

  private async checkMiners(): Promise<MinersStatusDto> {
    let counts = { total: 0, available: 0, addressRefused: 0 };
    const status = await timed(async () => {
      counts = await this.network.countMiners();
    });
    const state =
      status.status === 'healthy' && counts.available === 0 ? 'degraded' : status.status;
    return {
      ...status,
      status: state,
      available: counts.available,
      total: counts.total,
      address_refused: counts.addressRefused,
    };
  }
}

async function timed(check: () => Promise<unknown>): Promise<ComponentStatusDto> {
  const started = performance.now();
  let timer: NodeJS.Timeout | undefined;
  try {
    await Promise.race([
      check(),
      new Promise((_, reject) => {
        timer = setTimeout(
          () => reject(new Error(`no answer within ${CHECK_TIMEOUT_MS} ms`)),
          CHECK_TIMEOUT_MS,
        );
      }),
    ]);
    return { status: 'healthy', latency_ms: round(performance.now() - started) };
  } catch (error) {
    return {
      status: 'unhealthy',
      latency_ms: round(performance.now() - started),
      error: (error as Error).message,
    };
  } finally {
    clearTimeout(timer);
  }
}

function round(ms: number): number {
  return Math.round(ms * 100) / 100;
}
