/**
 * Runs work units one after the other per key, in the order they were queued; units with no key
 * in common run side by side. A unit of several keys starts once every earlier unit of any of its
 * keys has ended (queued in one step, so there is no cycle to wait on). A unit that fails does not
 * stop the next one.
 */
export class KeyedQueue {
  private readonly tails = new Map<string, Promise<void>>();

  run<T>(keys: readonly string[], work: () => Promise<T>): Promise<T> {
    const earlier: Array<Promise<void>> = [];
    for (const key of keys) {
      const tail = this.tails.get(key);
      if (tail) earlier.push(tail);
    }
    const result = earlier.length === 0 ? work() : Promise.all(earlier).then(work);
    const ended = result.then(
      () => undefined,
      () => undefined,
    );
    for (const key of keys) this.tails.set(key, ended);
    void ended.then(() => {
      for (const key of keys) if (this.tails.get(key) === ended) this.tails.delete(key);
    });
    return result;
  }

  /** Keys with a unit queued or running (for tests). */
  get size(): number {
    return this.tails.size;
  }
}
