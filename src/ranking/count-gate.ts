import type { ErrorDoc } from '../common/decorators/api-errors.decorator';
import { UnavailableError } from '../common/errors/app-error';

const REFUSED =
  'Ranks are counted in the database while the rank index is rebuilt, and this instance is counting ' +
  'as many as the database can take; retry later (an upload is stored already: sent again once the index is back, it is answered)';

/** The 503 of a route that answers ranks (OpenAPI): the database, or a CountGate refusal. */
export const RANKS_503: ErrorDoc = {
  description:
    'UNAVAILABLE: the database cannot be reached; or the rank index is being rebuilt and this instance is already ' +
    'counting as many ranks in SQL as it may, or this caller has one being counted and 32 waiting already (with ' +
    'Retry-After; an upload answered so is stored, and is answered when sent again once the index is back: until then a ' +
    "resend may be refused too); or, for a window (`around`) on a live period or a group's or country's board, this " +
    'instance is already counting as many of those windows as it may, or this caller has one being counted and 16 ' +
    'waiting already (with Retry-After)',
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
  /**
   * For counts run with a caller (run(work, caller)): how many of one caller's may wait at once;
   * one more is refused at once with `perCallerMessage`. A caller never has more than one count
   * running, so no caller holds every slot. Counts run without a caller have no such limit.
   */
  perCallerQueue?: number;
}

interface Waiter {
  caller: string | undefined;
  start: () => void;
  timer: NodeJS.Timeout;
}

/**
 * The SQL rank counts (RankAnswerService's fallback while the rank index cannot answer) at
 * PostgreSQL's pace instead of the callers': at 1,000,000 ranked players one count walks half a
 * million index entries (about 0.17 s of a core), so a network's uploads falling back all at once
 * would hold every pooled connection and answer 503 to every route, logins and syncs included,
 * for as long as the index rebuilds. Here at most `concurrency` counts run, `queue` wait in
 * order, each for at most `maxWaitMs`; the others are refused at once with 503 UNAVAILABLE and
 * Retry-After (docs/decisions.md "Rank counts while the index rebuilds").
 *
 * A count run with a caller (the BoardCountGate's windows, open to every key and game server) is
 * also fair between callers: one caller has at most one count running and `perCallerQueue`
 * waiting, and a freed slot goes to the first waiter whose caller has none running, so a caller
 * asking many at once waits for its own turns while the others' go ahead
 * (docs/decisions.md "Windows counted in SQL").
 */
export class CountGate {
  private running = 0;
  /** Callers with a count running (each has exactly one). */
  private readonly busy = new Set<string>();
  private readonly waiting: Waiter[] = [];
  private counted = 0;
  private refused = 0;

  constructor(
    private readonly limits: CountGateLimits,
    /** The 503's message: why this caller's count was refused. */
    private readonly message: string = REFUSED,
    /** The 503's message when the caller's own counts fill its part of the queue. */
    private readonly perCallerMessage: string = message,
  ) {}

  /** Runs `work` in turn; `caller` (who asks, e.g. `server:7`) makes the turn fair between callers. */
  async run<T>(work: () => Promise<T>, caller?: string): Promise<T> {
    // A waiter that could use a free slot has it already (pump), so a caller that may start goes first.
    if (this.running < this.limits.concurrency && this.mayStart(caller)) this.begin(caller);
    else await this.turn(caller);
    try {
      return await work();
    } finally {
      this.counted++;
      this.end(caller);
    }
  }

  /** Counts run and refused since the start, for the metrics. */
  totals(): { counted: number; refused: number } {
    return { counted: this.counted, refused: this.refused };
  }

  private mayStart(caller: string | undefined): boolean {
    return caller === undefined || !this.busy.has(caller);
  }

  private begin(caller: string | undefined): void {
    this.running++;
    if (caller !== undefined) this.busy.add(caller);
  }

  /** Waits for a slot handed over by pump(); refuses when a queue is full or the wait too long. */
  private turn(caller: string | undefined): Promise<void> {
    if (this.waiting.length >= this.limits.queue) return Promise.reject(this.refusal(this.message));
    const perCaller = this.limits.perCallerQueue;
    if (caller !== undefined && perCaller !== undefined) {
      let mine = 0;
      for (const waiter of this.waiting) if (waiter.caller === caller) mine++;
      if (mine >= perCaller) return Promise.reject(this.refusal(this.perCallerMessage));
    }
    return new Promise<void>((resolve, reject) => {
      const waiter: Waiter = {
        caller,
        start: resolve,
        timer: setTimeout(() => {
          this.waiting.splice(this.waiting.indexOf(waiter), 1);
          reject(this.refusal(this.message));
        }, this.limits.maxWaitMs),
      };
      this.waiting.push(waiter);
    });
  }

  /** A count ended: its slot goes to the first waiters that may start (pump). */
  private end(caller: string | undefined): void {
    this.running--;
    if (caller !== undefined) this.busy.delete(caller);
    this.pump();
  }

  /** Starts waiters in order while a slot is free, skipping those whose caller has a count running. */
  private pump(): void {
    for (let i = 0; i < this.waiting.length && this.running < this.limits.concurrency;) {
      const waiter = this.waiting[i];
      if (!this.mayStart(waiter.caller)) {
        i++;
        continue;
      }
      this.waiting.splice(i, 1);
      clearTimeout(waiter.timer);
      this.begin(waiter.caller);
      waiter.start();
    }
  }

  private refusal(message: string): UnavailableError {
    this.refused++;
    return new UnavailableError(message, { 'Retry-After': String(this.limits.retryAfterSeconds) });
  }
}
