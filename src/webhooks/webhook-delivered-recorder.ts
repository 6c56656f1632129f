/** A success to record: the delivery and the receiver's status. */
export interface DeliveredOutcome {
  id: string;
  status: number;
}

/** The largest group one statement records (the rest waits for the next one). */
const MAX_GROUP = 500;

/**
 * Records successful attempts in groups (group commit): a success is queued and the sending slot
 * it held is free at once; one statement at a time writes every success queued since the previous
 * one started. Under load the groups grow by themselves (a thousand deliveries a second become a
 * few dozen statements, not a thousand), and alone a success is written at once, with no timer.
 *
 * Until its group is written a delivery keeps the lease its claim gave it (the timeout + 30 s), so
 * no instance takes it again meanwhile. A group that cannot be written (the database is away) is
 * reported and dropped: its rows are taken again when their lease ends and sent again under the
 * same delivery id, which receivers dedupe on (docs/decisions.md "Webhooks").
 */
export class DeliveredRecorder<T extends DeliveredOutcome> {
  private queue: T[] = [];
  private running: Promise<void> | null = null;

  constructor(
    private readonly write: (group: readonly T[]) => Promise<void>,
    private readonly recorded: (group: readonly T[]) => void,
    private readonly failed: (group: readonly T[], error: unknown) => void,
  ) {}

  add(outcome: T): void {
    this.queue.push(outcome);
    this.running ??= this.drain();
  }

  /** Resolves once every success queued so far is written (or reported as not written). */
  async idle(): Promise<void> {
    while (this.running) await this.running;
  }

  private async drain(): Promise<void> {
    while (this.queue.length > 0) {
      const group = this.queue.splice(0, MAX_GROUP);
      try {
        await this.write(group);
        this.recorded(group);
      } catch (error) {
        this.failed(group, error);
      }
    }
    this.running = null;
  }
}
