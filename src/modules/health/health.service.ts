import { Injectable } from '@nestjs/common';
import { LRUCache } from 'lru-cache';
import { RedisConnection } from '../../common/redis/redis-connection';
import { API_VERSION } from '../../common/version';
import { AppConfig } from '../../config/app-config';
import { InjectConfig } from '../../config/config.module';
import { ValidatorIdentity } from '../../network/bittensor/validator-identity';
import { NetworkService } from '../../network/network.service';
import { PublicationService } from '../publication/publication.service';
import { HealthResponseDto } from './dto/health-response.dto';
import {
  ChainStatusDto,
  ComponentStatusDto,
  MinersStatusDto,
  Network,
  PublicationComponentStatusDto,
  SystemStatusDto,
} from './dto/system-status.dto';
import { HealthRepository } from './health.repository';
import { roundTo } from '../../common/round-to';
import { within } from '../../common/within';

const CHECK_CACHE_MS = 1000;
const CHECK_TIMEOUT_MS = 1000;

/** What health and system-status share; Redis is system-status' alone (redisChecks). */
interface ComponentChecks {
  database: ComponentStatusDto;
  miners: MinersStatusDto;
  chain: ChainStatusDto;
  publication: PublicationComponentStatusDto;
}

interface Checks {
  components: ComponentChecks;
  network: Network | null;
}

@Injectable()
export class HealthService {
  private readonly startedAt = Date.now();
  /** Health may be polled hard: checks run at most once a second, concurrent polls share one. */
  private readonly checks = new LRUCache<'checks', Checks>({
    max: 1,
    ttl: CHECK_CACHE_MS,
    fetchMethod: () => this.runChecks(),
  });
  /**
   * Redis' check, apart: health does not report it, and once a rest after a failed command is
   * over it waits for the PING that ends the rest (up to a second), which a balancer's poll must
   * not.
   */
  private readonly redisChecks = new LRUCache<'redis', ComponentStatusDto>({
    max: 1,
    ttl: CHECK_CACHE_MS,
    fetchMethod: () => this.checkRedis(),
  });

  constructor(
    private readonly repository: HealthRepository,
    private readonly network: NetworkService,
    private readonly redis: RedisConnection,
    private readonly identity: ValidatorIdentity,
    private readonly publication: PublicationService,
    @InjectConfig() private readonly config: AppConfig,
  ) {}

  /**
   * Synchronous while the last checks are fresh (nearly every poll): an answer made of promises
   * cost more than the rest of the route.
   */
  health(): HealthResponseDto | Promise<HealthResponseDto> {
    const fresh = this.checks.get('checks');
    return fresh
      ? this.healthOf(fresh)
      : this.runChecksCached().then((checks) => this.healthOf(checks));
  }

  private healthOf({ components, network }: Checks): HealthResponseDto {
    return {
      status: components.database.status === 'healthy' ? 'healthy' : 'unhealthy',
      timestamp: new Date().toISOString(),
      miners_available: components.miners.available,
      version: API_VERSION,
      netuid: this.config.netuid,
      hotkey: this.identity.hotkey,
      network,
    };
  }

  async systemStatus(): Promise<SystemStatusDto> {
    const [checks, redis] = await Promise.all([this.runChecksCached(), this.redisChecked()]);
    const { network } = checks;
    const { database, ...others } = checks.components;
    const components = { database, redis, ...others };
    const degraded =
      components.redis.status === 'degraded' ||
      components.miners.status !== 'healthy' ||
      components.chain.status === 'degraded' ||
      components.publication.status === 'degraded';
    return {
      status:
        components.database.status !== 'healthy' ? 'unhealthy' : degraded ? 'degraded' : 'healthy',
      timestamp: new Date().toISOString(),
      uptime_seconds: Math.round((Date.now() - this.startedAt) / 1000),
      version: API_VERSION,
      network,
      components,
    };
  }

  private async runChecksCached(): Promise<Checks> {
    // A fresh result is read without fetch(), whose promises cost more than the rest of a hit.
    return this.checks.get('checks') ?? (await this.checks.fetch('checks'))!;
  }

  private async redisChecked(): Promise<ComponentStatusDto> {
    return this.redisChecks.get('redis') ?? (await this.redisChecks.fetch('redis'))!;
  }

  private async runChecks(): Promise<Checks> {
    const miners = this.checkMiners();
    const [database, metagraph, publication] = await Promise.all([
      timed(() => this.repository.ping()),
      inTime(this.network.metagraphStatus()).catch(() => undefined),
      this.checkPublication(),
    ]);
    return {
      components: {
        database,
        miners: this.withFileProblem(miners, metagraph),
        chain: this.chainStatus(metagraph),
        publication,
      },
      network: this.networkOf(metagraph),
    };
  }

  /**
   * A METAGRAPH_FILE whose last read failed: the miners' status says so (there is no chain
   * component for a file), keeping the counts of the last metagraph read.
   */
  private withFileProblem(
    miners: MinersStatusDto,
    metagraph: Awaited<ReturnType<NetworkService['metagraphStatus']>> | undefined,
  ): MinersStatusDto {
    const attempt = metagraph?.lastAttempt;
    if (!this.config.network.metagraphFile || !attempt || attempt.ok) return miners;
    return {
      ...miners,
      status: miners.status === 'healthy' ? 'degraded' : miners.status,
      error: `METAGRAPH_FILE could not be read: ${attempt.error}`,
    };
  }

  /**
   * The stored metagraph's network: null until one was read (as documented), even with a source
   * configured. While it cannot be read (database away), the last one this process read (at
   * start or since, whoever read it), else what the configuration says: a devnet's
   * METAGRAPH_FILE would otherwise be reported as a file of the real network.
   */
  private networkOf(
    metagraph: Awaited<ReturnType<NetworkService['metagraphStatus']>> | undefined,
  ): Network | null {
    if (!metagraph) return this.network.lastReadNetwork() ?? this.configuredNetwork();
    return metagraph.stored?.network ?? null;
  }

  private configuredNetwork(): Network | null {
    if (this.config.network.subtensor) return 'subtensor';
    return this.config.network.metagraphFile ? 'file' : null;
  }

  private chainStatus(
    metagraph: Awaited<ReturnType<NetworkService['metagraphStatus']>> | undefined,
  ): ChainStatusDto {
    const disabled = {
      latency_ms: null,
      chain_name: null,
      genesis_hash: null,
      block: null,
      last_read_at: null,
      age_seconds: null,
    };
    if (!this.config.network.subtensor) return { status: 'disabled', ...disabled };
    if (!metagraph) return { status: 'degraded', ...disabled, error: 'database unavailable' };
    const { lastAttempt, stored, chain } = metagraph;
    const fromChain = stored?.network === 'subtensor' ? stored : undefined;
    // The age is the block's, not the read's: a node stuck at a block is read on and on.
    const advancedAt = fromChain ? (fromChain.blockAdvancedAt ?? fromChain.readAt) : undefined;
    const ageMs = advancedAt ? Date.now() - advancedAt.getTime() : null;
    const staleAfterMs = staleBlockMs(this.config.network.subtensor.syncIntervalMs);
    const stuck =
      ageMs !== null && ageMs > staleAfterMs
        ? `the node's block ${fromChain!.block} has not advanced since ` +
          `${advancedAt!.toISOString()} (over ${Math.round(staleAfterMs / 60_000)} minutes): ` +
          'the node is stuck or not syncing'
        : undefined;
    const error = lastAttempt?.ok ? stuck : (lastAttempt?.error ?? 'not read yet');
    return {
      status: error === undefined ? 'healthy' : 'degraded',
      latency_ms: null,
      chain_name: chain?.chain ?? null,
      genesis_hash: chain?.genesisHash ?? null,
      block: fromChain?.block ?? null,
      last_read_at: fromChain?.readAt.toISOString() ?? null,
      age_seconds: ageMs === null ? null : Math.round(ageMs / 1000),
      ...(error === undefined ? {} : { error }),
    };
  }

  /** A failed publication is retried on its own: `degraded` until an attempt succeeds. */
  private async checkPublication(): Promise<PublicationComponentStatusDto> {
    try {
      const status = await inTime(this.publication.status());
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

  /**
   * Redis is optional to serving (rate limits and the cache fall back to this process), so an
   * unreachable Redis is `degraded`, never `unhealthy`.
   */
  private async checkRedis(): Promise<ComponentStatusDto> {
    const client = this.redis.client;
    if (!client) return { status: 'disabled', latency_ms: null };
    const problem = await this.redis.problem();
    if (problem) return { status: 'degraded', latency_ms: null, error: problem };
    const result = await timed(() => client.ping());
    return result.status === 'healthy' ? result : { ...result, status: 'degraded' };
  }

  /**
   * Counted from the metagraph in memory (no round trip: `latency_ms` null), so that a saturated
   * pool, whose wait outlasts the checks' second, no longer leaves the counts at 0.
   */
  private checkMiners(): MinersStatusDto {
    const counts = this.network.countMiners();
    const hotkey = this.network.hotkeyCheck();
    const degraded = counts.available === 0 || hotkey?.problem !== undefined;
    return {
      ...(hotkey?.problem ? { error: hotkey.problem } : {}),
      status: degraded ? 'degraded' : 'healthy',
      latency_ms: null,
      available: counts.available,
      total: counts.total,
      serving: counts.serving,
      validators: counts.validators,
      address_refused: counts.addressRefused,
      hotkey_standing: hotkey?.standing ?? null,
    };
  }
}

/**
 * How long the stored block may stay the same before the chain counts as stale: a block comes
 * every 12 s, and a read every METAGRAPH_SYNC_INTERVAL; two intervals, and at least 10 minutes.
 */
export function staleBlockMs(syncIntervalMs: number): number {
  return Math.max(10 * 60_000, 2 * syncIntervalMs);
}

/**
 * Every check answers within CHECK_TIMEOUT_MS, whatever it waits on: a Postgres that stops
 * answering without closing its connections (frozen, or cut off by a partition) holds a query
 * until the network gives up, and health is what a load balancer polls.
 */
function inTime<T>(check: Promise<T>): Promise<T> {
  return within(check, CHECK_TIMEOUT_MS);
}

async function timed(check: () => Promise<unknown>): Promise<ComponentStatusDto> {
  const started = performance.now();
  try {
    await inTime(check());
    return { status: 'healthy', latency_ms: roundTo(performance.now() - started, 2) };
  } catch (error) {
    return {
      status: 'unhealthy',
      latency_ms: roundTo(performance.now() - started, 2),
      error: (error as Error).message,
    };
  }
}
