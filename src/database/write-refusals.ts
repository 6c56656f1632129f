/**
 * When the database last refused a statement for want of a resource (a full disk, memory,
 * connections) or because it is read-only, as the pool's connections saw it. A full data disk lets
 * reads and the readiness probe's one-row write through while every insert that needs a new page
 * fails, so readiness also fails while such refusals are recent (docs/decisions.md "Readiness").
 */
export class WriteRefusals {
  private lastAt = 0;
  private lastReason = '';

  note(reason: string, at = Date.now()): void {
    this.lastAt = at;
    this.lastReason = reason;
  }

  /** The last refusal's reason when it came within `windowMs`, else null. */
  recent(windowMs: number, now = Date.now()): string | null {
    return this.lastAt > 0 && now - this.lastAt < windowMs ? this.lastReason : null;
  }
}
