import { Logger } from '@nestjs/common';
import type Redis from 'ioredis';
import { EventBus, ServiceEvent, ServiceEventHandler } from './events';
import { InProcessEventBus } from './in-process-event-bus';

/**
 * Fan-out across instances over Redis pub/sub (decisions.md §7). Every instance, the publisher
 * included, receives each event once through its subscription. When Redis cannot take the
 * publish, the event is delivered locally so this instance keeps working.
 */
export class RedisEventBus implements EventBus {
  private readonly logger = new Logger('EventBus');
  private readonly local = new InProcessEventBus();
  private readonly channel: string;
  private readonly subscriber: Redis;

  constructor(
    private readonly publisher: Redis,
    keyPrefix: string,
  ) {
    // ioredis' keyPrefix does not apply to channel names: prefix them here.
    this.channel = `${keyPrefix}events`;
    this.subscriber = publisher.duplicate();
    this.subscriber.on('error', (error: Error) => this.logger.warn(`Redis subscriber error: ${error.message}`));
    this.subscriber.on('message', (channel: string, payload: string) => {
      if (channel !== this.channel) return;
      let event: ServiceEvent;
      try {
        event = JSON.parse(payload) as ServiceEvent;
      } catch {
        this.logger.warn('Dropped a malformed event from Redis');
        return;
      }
      this.local.deliver(event);
    });
  }

  async start(): Promise<void> {
    await this.subscriber.subscribe(this.channel);
  }

  async publish(event: ServiceEvent): Promise<void> {
    try {
      await this.publisher.publish(this.channel, JSON.stringify(event));
    } catch (error) {
      this.logger.warn(`Publishing ${event.type} through Redis failed (${error instanceof Error ? error.message : String(error)}); delivering locally`);
      this.local.deliver(event);
    }
  }

  subscribe(handler: ServiceEventHandler): () => void {
    return this.local.subscribe(handler);
  }

  async stop(): Promise<void> {
    if (this.subscriber.status !== 'end') await this.subscriber.quit().catch(() => undefined);
  }
}
