import { Global, Inject, Module, OnApplicationShutdown } from '@nestjs/common';
import type Redis from 'ioredis';
import { APP_CONFIG, AppConfig } from '../../config/app-config';
import { REDIS } from '../redis/redis.module';
import { EVENT_BUS, EventBus } from './events';
import { InProcessEventBus } from './in-process-event-bus';
import { RedisEventBus } from './redis-event-bus';

/** The event bus: one interface, in-process without REDIS_URL, Redis pub/sub with it. */
@Global()
@Module({
  providers: [
    {
      provide: EVENT_BUS,
      inject: [APP_CONFIG, REDIS],
      useFactory: async (config: AppConfig, redis: Redis | null): Promise<EventBus> => {
        if (!redis) return new InProcessEventBus();
        const bus = new RedisEventBus(redis, config.redisKeyPrefix);
        // Wait for the subscription, but not forever: with Redis down the instance still starts
        // (events are then delivered locally) and ioredis subscribes when Redis comes back.
        await Promise.race([
          bus.start().catch(() => undefined),
          new Promise((resolve) => setTimeout(resolve, 3_000).unref()),
        ]);
        return bus;
      },
    },
  ],
  exports: [EVENT_BUS],
})
export class EventBusModule implements OnApplicationShutdown {
  constructor(@Inject(EVENT_BUS) private readonly bus: EventBus) {}

  async onApplicationShutdown(): Promise<void> {
    if (this.bus instanceof RedisEventBus) await this.bus.stop();
  }
}
