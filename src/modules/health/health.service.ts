import { Injectable, OnModuleInit } from '@nestjs/common';
import { LRUCache } from 'lru-cache';
import { Clock } from '../../common/clock/clock';
import { DatabaseOutageLog } from '../../common/database-outage-log';
import { RedisConnection } from '../../common/redis/redis-connection';
import { AppConfig } from '../../config/app-config';
import { InjectConfig } from '../../config/config.module';
import { ValidatorIdentity } from '../../network/bittensor/validator-identity';
import { NetworkService } from '../../network/network.service';
import { PublicationService } from '../publication/publication.service';
import { HealthResponseDto } from './dto/health-response.dto';
import { SystemStatusDto } from './dto/system-status.dto';
import { HealthRepository } from './health.repository';
import {
  chainStatus,
  minerIndexStatus,
  minersStatus,
  networkOf,
  withFileProblem,
} from './network-checks';
import { publicationStatus } from './publication-check';
import { redisStatus } from './redis-check';
import { Checks, healthReport, StatusOnlyChecks, systemStatusReport } from './status-reports';
import { databaseReason } from './health-reason';
import { componentOf, inTime, measured } from './timed-check';

const CHECK_CACHE_MS = 1000;

@Injectable()
export class HealthService implements OnModuleInit {
  /** performance.now(): uptime from the wall clock went negative when it was set back. */
  private readonly startedAt = performance.now();
  /** Health may be polled hard: checks run at most once a second, concurrent polls share one. */
  private readonly checks = new LRUCache<'checks', Checks>({
    max: 1,
    ttl: CHECK_CACHE_MS,
    fetchMethod: () => this.runChecks(),
  });
  /**
   * The checks of what health does not report, apart: Redis' waits, once a rest after a failed
   * command is over, for the PING that ends the rest (up to a second), and the miner index's is a
   * query through the main pool, neither of which a balancer's poll must wait on or pay for.
   */
  private readonly statusOnlyChecks = new LRUCache<'status', StatusOnlyChecks>({
    max: 1,
    ttl: CHECK_CACHE_MS,
    fetchMethod: async () => {
      const [redis, minerIndex] = await Promise.all([
        redisStatus(this.redis),
        minerIndexStatus(this.network),
      ]);
      return { redis, minerIndex };
    },
  });

  constructor(
    private readonly repository: HealthRepository,
    private readonly network: NetworkService,
    private readonly redis: RedisConnection,
    private readonly identity: ValidatorIdentity,
    private readonly publication: PublicationService,
    @InjectConfig() private readonly config: AppConfig,
    private readonly outages: DatabaseOutageLog,
    private readonly clock: Clock,
  ) {}

  /**
   * The outage log asks the database itself while an outage lasts, by the checks' own `SELECT 1`
   * (on health's connection, within its 1 s): with no health, system-status or /metrics request,
   * nothing ran it and the recovery went unsaid (DatabaseOutageLog).
   */
  onModuleInit(): void {
    this.outages.probeWith(
      async () => !('error' in (await measured(() => this.repository.ping()))),
    );
  }

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

  /**
   * The report health answers: unhealthy, a 503 (HealthController), counted with the outage's
   * other 503s. Uncounted, the recovery line left out every balancer's check (a log audit).
   */
  private healthOf(checks: Checks): HealthResponseDto {
    const database = checks.components.database;
    if (database.status !== 'healthy')
      this.outages.unavailable(database.error ?? 'no answer', undefined);
    return healthReport(checks, this.config.netuid, this.identity.hotkey, this.clock.now());
  }

  async systemStatus(): Promise<SystemStatusDto> {
    const [checks, own] = await Promise.all([this.runChecksCached(), this.statusOnlyChecked()]);
    return systemStatusReport(checks, own, this.startedAt, this.clock.now());
  }

  /** Whether the database answered the checks' round trip (run now if over a second old). */
  async databaseUp(): Promise<boolean> {
    return (await this.runChecksCached()).components.database.status === 'healthy';
  }

  private async runChecksCached(): Promise<Checks> {
    // A fresh result is read without fetch(), whose promises cost more than the rest of a hit.
    return this.checks.get('checks') ?? (await this.checks.fetch('checks'))!;
  }

  private async statusOnlyChecked(): Promise<StatusOnlyChecks> {
    return this.statusOnlyChecks.get('status') ?? (await this.statusOnlyChecks.fetch('status'))!;
  }

  private async runChecks(): Promise<Checks> {
    const miners = minersStatus(this.network);
    const [ping, metagraph, publication] = await Promise.all([
      measured(() => this.repository.ping()),
      inTime(this.network.metagraphStatus()).catch(() => undefined),
      publicationStatus(this.publication),
    ]);
    // The probe's SELECT 1 is what says the database is back, or gone, whoever asked.
    if ('error' in ping) this.outages.checkFailed(ping.error.message);
    else this.outages.reachable();
    return {
      components: {
        database: componentOf(ping),
        miners: withFileProblem(miners, metagraph, this.config),
        chain: chainStatus(metagraph, this.config),
        publication,
      },
      network: networkOf(metagraph, this.network, this.config),
      ...('error' in ping ? { databaseReason: databaseReason(ping.error) } : {}),
    };
  }
}
