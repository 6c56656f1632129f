import { Logger } from '@nestjs/common';
import type Redis from 'ioredis';
import { EventBus, EventsResumedEvent, ServiceEvent, ServiceEventHandler } from './events';
import { InProcessEventBus } from './in-process-event-bus';

const RESUMED: EventsResumedEvent = { type: 'events.resumed' };

/**
 * Fan-out across instances over Redis pub/sub (decisions.md §7). Every instance, the publisher
 * included, receives each event once through its subscription. When Redis is down (or this
 * instance's subscription is), the event is delivered locally at once so this instance keeps
 * working; ioredis reconnects and resubscribes when Redis returns. Events are not replayed: once
 * the subscription is back this instance's handlers get `events.resumed`, and once an instance
 * that published alone reaches Redis again it publishes `events.resumed` to every instance, so
 * that what was kept for them (the kick outbox) is read again.
 */
export class RedisEventBus implements EventBus {
  private readonly logger = new Logger('EventBus');
  private readonly local = new InProcessEventBus();
  private readonly channel: string;
  private readonly subscriber: Redis;
  /** The SUBSCRIBE went through once; from then on ioredis resubscribes after every reconnect. */
  private subscribed = false;
  /** The start's SUBSCRIBE is in flight: the connection's first 'ready' sends it (offline queue). */
  private starting = false;
  /** True while events go around Redis; logged once per outage, not per event. */
  private degraded = false;
  /** An event of this instance reached only its own handlers: the others are told once Redis is back. */
  private publishedAlone = false;

  constructor(
    private readonly publisher: Redis,
    keyPrefix: string,
  ) {
    // ioredis' keyPrefix does not apply to channel names: prefix them here.
    this.channel = `${keyPrefix}events`;
    // No autoResubscribe: ioredis would send that SUBSCRIBE itself after a reconnect with no handler
    // on its promise, and a close while it is in flight (a shutdown just after a Redis blip) made it an
    // unhandled rejection, which ends a Node process. The 'ready' handler below subscribes instead.
    this.subscriber = publisher.duplicate({ autoResubscribe: false });
    this.subscriber.on('error', (error: Error) => this.logger.warn(`Redis subscriber error: ${error.message}`));
    // After a reconnect (or a subscription that failed at start, which ioredis does not retry):
    // subscribe, and once that is confirmed let the handlers catch up with what they may have missed.
    this.subscriber.on('ready', () => {
      if (this.starting) return;
      this.listen().then(
        () => {
          this.logger.log('Subscribed to events through Redis again; kept events are read again');
          this.local.deliver(RESUMED);
        },
        () => undefined,
      );
    });
    this.publisher.on('ready', () => {
      if (this.publishedAlone) void this.publish(RESUMED);
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
    this.starting = true;
    try {
      await this.listen();
    } finally {
      this.starting = false;
    }
  }

  private async listen(): Promise<void> {
    await this.subscriber.subscribe(this.channel);
    this.subscribed = true;
  }

  async publish(event: ServiceEvent): Promise<void> {
    // Without our own subscription the event would not come back to this instance through Redis.
    const subscribed = this.subscribed && this.subscriber.status === 'ready';
    if (!subscribed) this.local.deliver(event);
    if (this.publisher.status !== 'ready') {
      if (subscribed) this.local.deliver(event);
      this.publishedAlone = true;
      this.degrade(`Redis is ${this.publisher.status}`);
      return;
    }
    try {
      await this.publisher.publish(this.channel, JSON.stringify(event));
    } catch (error) {
      if (subscribed) this.local.deliver(event);
      this.publishedAlone = true;
      this.degrade(`publishing ${event.type} failed: ${error instanceof Error ? error.message : String(error)}`);
      return;
    }
    if (event.type === 'events.resumed') this.publishedAlone = false;
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
