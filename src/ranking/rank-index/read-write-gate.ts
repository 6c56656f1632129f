/**
 * Many shared holders or one exclusive holder. An exclusive request waits for the shared holders
 * that are in, and holds back new ones until it is done (writer preference), so a rebuild of the
 * in-process rank index never runs beside a transaction that stages changes into it.
 */
export class ReadWriteGate {
  private shared = 0;
  private exclusive: Promise<void> | null = null;
  private drained: (() => void) | null = null;

  async runShared<T>(work: () => Promise<T>): Promise<T> {
    while (this.exclusive) await this.exclusive;
    this.shared++;
    try {
      return await work();
    } finally {
      this.shared--;
      if (this.shared === 0) this.drained?.();
    }
  }

  async runExclusive<T>(work: () => Promise<T>): Promise<T> {
    while (this.exclusive) await this.exclusive;
    let release!: () => void;
    this.exclusive = new Promise<void>((resolve) => (release = resolve));
    try {
      if (this.shared > 0) await new Promise<void>((resolve) => (this.drained = resolve));
      this.drained = null;
      return await work();
    } finally {
      this.exclusive = null;
      release();
    }
  }
}
