import { Logger } from '@nestjs/common';
import type Redis from 'ioredis';
import { EventBus, ServiceEvent, ServiceEventHandler } from './events';
import { InProcessEventBus } from './in-process-event-bus';

/**
 * Fan-out across instances over Redis pub/sub (decisions.md §7). Every instance, the publisher
 * included, receives each event once through its subscription. When Redis is down (or this
 * instance's subscription is), the event is delivered locally at once so this instance keeps
 * working; ioredis reconnects and resubscribes when Redis returns.
 */
export class RedisEventBus implements EventBus {
  private readonly logger = new Logger('EventBus');
  private readonly local = new InProcessEventBus();
  private readonly channel: string;
  private readonly subscriber: Redis;
  /** The SUBSCRIBE went through once; from then on ioredis resubscribes after every reconnect. */
  private subscribed = false;
  /** True while events go around Redis; logged once per outage, not per event. */
  private degraded = false;

  constructor(
    private readonly publisher: Redis,
    keyPrefix: string,
  ) {
    // ioredis' keyPrefix does not apply to channel names: prefix them here.
    this.channel = `${keyPrefix}events`;
    this.subscriber = publisher.duplicate();
    this.subscriber.on('error', (error: Error) => this.logger.warn(`Redis subscriber error: ${error.message}`));
    // A subscription that failed (Redis down at start) is not resubscribed by ioredis: make it when Redis is there.
    this.subscriber.on('ready', () => {
      if (!this.subscribed) this.start().catch(() => undefined);
    });
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
    this.subscribed = true;
  }

  async publish(event: ServiceEvent): Promise<void> {
    // Without our own subscription the event would not come back to this instance through Redis.
    const subscribed = this.subscribed && this.subscriber.status === 'ready';
    if (!subscribed) this.local.deliver(event);
    if (this.publisher.status !== 'ready') {
      if (subscribed) this.local.deliver(event);
      this.degrade(`Redis is ${this.publisher.status}`);
      return;
    }
    try {
      await this.publisher.publish(this.channel, JSON.stringify(event));
    } catch (error) {
      if (subscribed) this.local.deliver(event);
      this.degrade(`publishing ${event.type} failed: ${error instanceof Error ? error.message : String(error)}`);
      return;
    }
    if (!subscribed) this.degrade('the subscription is down');
    else if (this.degraded) {
      this.degraded = false;
      this.logger.log('Events travel through Redis again');
    }
  }

  private degrade(reason: string): void {
    if (this.degraded) return;
    this.degraded = true;
    this.logger.warn(`Events are delivered on this instance only (${reason})`);
  }

  subscribe(handler: ServiceEventHandler): () => void {
    return this.local.subscribe(handler);
  }

  async stop(): Promise<void> {
    if (this.subscriber.status !== 'end') await this.subscriber.quit().catch(() => undefined);
  }
}
