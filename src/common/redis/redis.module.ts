import { Global, Inject, Logger, Module, OnApplicationShutdown } from '@nestjs/common';
import Redis from 'ioredis';
import { APP_CONFIG, AppConfig } from '../../config/app-config';

/** The shared ioredis client, or null when REDIS_URL is unset (single-process mode). */
export const REDIS = Symbol('REDIS');

export const REDIS_COMMAND_TIMEOUT_MS = 2_000;

/**
 * ioredis's `reconnectOnError`: a READONLY refusal means the connection is held by a node that is
 * a replica now (a managed failover that moved the address to the new primary keeps the old
 * connections open). Reconnecting (1) reaches whichever node the address names now; the command
 * itself fails, and its caller falls back as for Redis down. Any other error keeps the connection.
 */
export function reconnectOnReadOnly(error: Error): 1 | false {
  return error.message.startsWith('READONLY') ? 1 : false;
}

@Global()
@Module({
  providers: [
    {
      provide: REDIS,
      inject: [APP_CONFIG],
      useFactory: (config: AppConfig): Redis | null => {
        if (config.redisUrl === null) return null;
        const logger = new Logger('Redis');
        // Redis down must never hang a request: callers check `status` and fall back at once
        // (rate limits in memory, events delivered locally, ranks from SQL); a command sent anyway
        // fails after one reconnect attempt or REDIS_COMMAND_TIMEOUT_MS. The offline queue stays on
        // for the start, when commands are issued before the connection is ready. ioredis keeps
        // reconnecting (at most every 2 s) and resubscribes when Redis is back. At shutdown, a
        // connection that has not closed 100 ms after QUIT (a peer gone half-way, a proxy) is
        // destroyed: ioredis's default keeps a timer 2 s, which held a stopping process, and was
        // the test worker that "failed to exit gracefully" (issue #47 item 7). duplicate() keeps it.
        const client = new Redis(config.redisUrl, {
          disconnectTimeout: 100,
          keyPrefix: config.redisKeyPrefix,
          maxRetriesPerRequest: 1,
          enableOfflineQueue: true,
          connectTimeout: 2_000,
          commandTimeout: REDIS_COMMAND_TIMEOUT_MS,
          reconnectOnError: reconnectOnReadOnly,
        });
        client.on('error', (error: Error) => logger.warn(`Redis error: ${error.message}`));
        return client;
      },
    },
  ],
  exports: [REDIS],
})
export class RedisModule implements OnApplicationShutdown {
  constructor(@Inject(REDIS) private readonly redis: Redis | null) {}

  async onApplicationShutdown(): Promise<void> {
    if (this.redis && this.redis.status !== 'end') await this.redis.quit().catch(() => undefined);
  }
}
