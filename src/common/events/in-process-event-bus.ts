import { Logger } from '@nestjs/common';
import { EventBus, ServiceEvent, ServiceEventHandler } from './events';

/** The bus of a single instance (no REDIS_URL). */
export class InProcessEventBus implements EventBus {
  private readonly logger = new Logger('EventBus');
  private readonly handlers = new Set<ServiceEventHandler>();

  publish(event: ServiceEvent): Promise<void> {
    this.deliver(event);
    return Promise.resolve();
  }

  subscribe(handler: ServiceEventHandler): () => void {
    this.handlers.add(handler);
    return () => this.handlers.delete(handler);
  }

  /** Hands the event to every local handler; one failing handler does not stop the others. */
  deliver(event: ServiceEvent): void {
    for (const handler of this.handlers) {
      try {
        handler(event);
      } catch (error) {
        this.logger.error(`Handler of ${event.type} failed: ${error instanceof Error ? error.message : String(error)}`);
      }
    }
  }
}
