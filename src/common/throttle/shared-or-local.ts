import { Logger } from '@nestjs/common';
import type Redis from 'ioredis';

/**
 * A counter kept in Redis (shared by every instance) while Redis answers, in this process while it
 * does not: an outage neither blocks callers nor lifts the limit, each instance counts on its own
 * until Redis is back (the counts then start again there). The switch is logged once each way.
 */
export class SharedOrLocal<S> {
  private readonly logger = new Logger('RateLimit');
  private degraded = false;

  /** `what` names the counters in the log line ("Net Token guesses are counted …"). */
  constructor(
    private readonly what: string,
    private readonly redis: Redis | null,
    private readonly shared: S | null,
    private readonly local: S,
  ) {}

  async run<T>(operation: (store: S) => Promise<T>): Promise<T> {
    if (this.shared && this.redis?.status === 'ready') {
      try {
        const result = await operation(this.shared);
        if (this.degraded) {
          this.degraded = false;
          this.logger.log(`${this.what} are counted in Redis again`);
        }
        return result;
      } catch (error) {
        this.degrade(error instanceof Error ? error.message : String(error));
      }
    } else if (this.shared) {
      this.degrade(`Redis is ${this.redis?.status ?? 'unset'}`);
    }
    return operation(this.local);
  }

  private degrade(reason: string): void {
    if (this.degraded) return;
    this.degraded = true;
    this.logger.warn(`${this.what} are counted in this process only (${reason})`);
  }
}
