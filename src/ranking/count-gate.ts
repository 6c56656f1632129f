import type { ErrorDoc } from '../common/decorators/api-errors.decorator';
import { UnavailableError } from '../common/errors/app-error';

const REFUSED =
  'Ranks are counted in the database while the rank index is rebuilt, and this instance is counting ' +
  'as many as the database can take; retry later (an upload is stored already: sent again once the index is back, it is answered)';

/** The 503 of a route that answers ranks (OpenAPI): the database, or a CountGate refusal. */
export const RANKS_503: ErrorDoc = {
  description:
    'UNAVAILABLE: the database cannot be reached; or the rank index is being rebuilt and this instance is already ' +
    'counting as many ranks in SQL as it may (with Retry-After; an upload answered so is stored, and is answered when sent ' +
    'again once the index is back: until then a resend may be refused too); or, for a window (`around`) on a live period ' +
    "or a group's or country's board, this instance is already counting as many of those windows as it may (with Retry-After)",
  message: REFUSED,
  retryAfter: 'Seconds to wait before sending the request again',
};

export interface CountGateLimits {
  /** Counts running at once. */
  concurrency: number;
  /** Counts waiting for a turn; one more is refused at once. */
  queue: number;
  /** How long a count may wait for its turn before it is refused. */
  maxWaitMs: number;
  /** Retry-After of a refusal, seconds. */
  retryAfterSeconds: number;
}

/**
 * The SQL rank counts (RankAnswerService's fallback while the rank index cannot answer) at
 * PostgreSQL's pace instead of the callers': at 1,000,000 ranked players one count walks half a
 * million index entries (about 0.17 s of a core), so a network's uploads falling back all at once
 * would hold every pooled connection and answer 503 to every route, logins and syncs included,
 * for as long as the index rebuilds. Here at most `concurrency` counts run, `queue` wait in
 * order, each for at most `maxWaitMs`; the others are refused at once with 503 UNAVAILABLE and
 * Retry-After (docs/decisions.md "Rank counts while the index rebuilds").
 */
export class CountGate {
  private running = 0;
  private readonly waiting: Array<{ start: () => void; timer: NodeJS.Timeout }> = [];
  private counted = 0;
  private refused = 0;

  constructor(
    private readonly limits: CountGateLimits,
    /** The 503's message: why this caller's count was refused. */
    private readonly message: string = REFUSED,
  ) {}

  async run<T>(work: () => Promise<T>): Promise<T> {
    if (this.running >= this.limits.concurrency) await this.turn();
    else this.running++;
    try {
      return await work();
    } finally {
      this.counted++;
      this.release();
    }
  }

  /** Counts run and refused since the start, for the metrics. */
  totals(): { counted: number; refused: number } {
    return { counted: this.counted, refused: this.refused };
  }

  /** Waits for a slot handed over by release(); refuses when the queue is full or the wait too long. */
  private turn(): Promise<void> {
    if (this.waiting.length >= this.limits.queue) return Promise.reject(this.refusal());
    return new Promise<void>((resolve, reject) => {
      const waiter = {
        start: resolve,
        timer: setTimeout(() => {
          this.waiting.splice(this.waiting.indexOf(waiter), 1);
          reject(this.refusal());
        }, this.limits.maxWaitMs),
      };
      this.waiting.push(waiter);
    });
  }

  /** The slot goes to the first waiter, if any (running stays the same), or is freed. */
  private release(): void {
    const next = this.waiting.shift();
    if (next) {
      clearTimeout(next.timer);
      next.start();
    } else {
      this.running--;
    }
  }

  private refusal(): UnavailableError {
    this.refused++;
    return new UnavailableError(this.message, { 'Retry-After': String(this.limits.retryAfterSeconds) });
  }
}
