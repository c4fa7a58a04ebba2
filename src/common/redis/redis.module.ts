import { Global, Module } from '@nestjs/common';
import { ReplicaDatabases } from './replica-databases';
import { ResponseCache } from './response-cache';
import { RedisConnection } from './redis-connection';

/** Shared Redis connection (or none) and what is built on it. */
@Global()
@Module({
  providers: [RedisConnection, ResponseCache, ReplicaDatabases],
  exports: [RedisConnection, ResponseCache],
})
export class RedisModule {}
