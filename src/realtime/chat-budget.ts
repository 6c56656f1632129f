/**
 * A token bucket per WebSocket connection for `chat` frames: `burst` lines at once, then
 * `perSecond` lines a second. Over it a line is refused before any lookup or fan-out, so a
 * flooding game server costs the others nothing.
 */
export class ChatBudget {
  private tokens: number;
  private refilledAt: number;

  constructor(
    private readonly perSecond: number,
    private readonly burst: number,
    now: number = Date.now(),
  ) {
    this.tokens = burst;
    this.refilledAt = now;
  }

  /** Takes one line from the budget; false when there is none left. */
  take(now: number = Date.now()): boolean {
    this.tokens = Math.min(this.burst, this.tokens + ((now - this.refilledAt) * this.perSecond) / 1_000);
    this.refilledAt = now;
    if (this.tokens < 1) return false;
    this.tokens -= 1;
    return true;
  }

  /** Whole seconds until the next line is allowed. */
  secondsUntilNext(): number {
    return Math.max(1, Math.ceil(((1 - this.tokens) * 1_000) / this.perSecond / 1_000));
  }
}
