import { Global, Module } from '@nestjs/common';
import { ResponseCache } from './response-cache';
import { RedisConnection } from './redis-connection';

/** Shared Redis connection (or none) and what is built on it. */
@Global()
@Module({ providers: [RedisConnection, ResponseCache], exports: [RedisConnection, ResponseCache] })
export class RedisModule {}
