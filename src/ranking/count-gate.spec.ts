import { UnavailableError } from '../common/errors/app-error';
import { CountGate } from './count-gate';

/** A unit of work that ends when told to. */
function deferred(): { work: () => Promise<string>; end: (value: string) => void; fail: (error: Error) => void } {
  let end!: (value: string) => void;
  let fail!: (error: Error) => void;
  const done = new Promise<string>((resolve, reject) => {
    end = resolve;
    fail = reject;
  });
  return { work: () => done, end, fail };
}

const flush = () => new Promise((resolve) => setImmediate(resolve));

describe('CountGate', () => {
  it('runs up to `concurrency` units at once and starts the waiting ones in order as slots free', async () => {
    const gate = new CountGate({ concurrency: 2, queue: 10, maxWaitMs: 60_000, retryAfterSeconds: 5 });
    const units = [deferred(), deferred(), deferred(), deferred()];
    const started: number[] = [];
    const results = units.map((unit, i) =>
      gate.run(() => {
        started.push(i);
        return unit.work();
      }),
    );
    await flush();
    expect(started).toEqual([0, 1]);
    units[1].end('b');
    await expect(results[1]).resolves.toBe('b');
    await flush();
    expect(started).toEqual([0, 1, 2]);
    units[0].end('a');
    await flush();
    expect(started).toEqual([0, 1, 2, 3]);
    units[2].end('c');
    units[3].end('d');
    await expect(Promise.all(results)).resolves.toEqual(['a', 'b', 'c', 'd']);
    expect(gate.totals()).toEqual({ counted: 4, refused: 0 });
  });

  it('refuses at once with 503 UNAVAILABLE and Retry-After when the queue is full', async () => {
    const gate = new CountGate({ concurrency: 1, queue: 1, maxWaitMs: 60_000, retryAfterSeconds: 7 });
    const running = deferred();
    const waiting = deferred();
    const first = gate.run(running.work);
    const second = gate.run(waiting.work);
    let ran = false;
    const third = gate.run(() => {
      ran = true;
      return Promise.resolve('never');
    });
    const refusal = await third.then(
      () => null,
      (error: unknown) => error,
    );
    expect(refusal).toBeInstanceOf(UnavailableError);
    expect(refusal).toMatchObject({ status: 503, code: 'UNAVAILABLE', headers: { 'Retry-After': '7' } });
    expect(ran).toBe(false);
    running.end('1');
    waiting.end('2');
    await expect(Promise.all([first, second])).resolves.toEqual(['1', '2']);
    expect(gate.totals()).toEqual({ counted: 2, refused: 1 });
  });

  it('refuses a unit that waited maxWaitMs, and hands the slot to the next one still waiting', async () => {
    jest.useFakeTimers();
    try {
      const gate = new CountGate({ concurrency: 1, queue: 5, maxWaitMs: 3_000, retryAfterSeconds: 5 });
      const running = deferred();
      const first = gate.run(running.work);
      const late = gate.run(() => Promise.resolve('late'));
      const lateOutcome = late.then(
        () => 'answered',
        (error: unknown) => (error instanceof UnavailableError ? 'refused' : 'other'),
      );
      jest.advanceTimersByTime(2_000);
      const next = gate.run(() => Promise.resolve('next'));
      jest.advanceTimersByTime(1_000); // the first waiter's 3 s are up, the second's not
      await expect(lateOutcome).resolves.toBe('refused');
      running.end('first');
      await expect(first).resolves.toBe('first');
      await expect(next).resolves.toBe('next');
      expect(gate.totals()).toEqual({ counted: 2, refused: 1 });
    } finally {
      jest.useRealTimers();
    }
  });

  it('frees the slot of a unit that fails', async () => {
    const gate = new CountGate({ concurrency: 1, queue: 1, maxWaitMs: 60_000, retryAfterSeconds: 5 });
    const failing = deferred();
    const first = gate.run(failing.work);
    const second = gate.run(() => Promise.resolve('after'));
    failing.fail(new Error('connection lost'));
    await expect(first).rejects.toThrow('connection lost');
    await expect(second).resolves.toBe('after');
    await expect(gate.run(() => Promise.resolve('free'))).resolves.toBe('free');
  });

  describe('with callers (run(work, caller))', () => {
    const limits = { concurrency: 2, queue: 10, maxWaitMs: 60_000, retryAfterSeconds: 5, perCallerQueue: 2 };
    const outcome = (promise: Promise<string>) =>
      promise.then(
        (value) => value,
        (error: unknown) => (error instanceof UnavailableError ? `refused: ${error.message}` : 'other'),
      );

    it('runs one count per caller at a time: a caller asking many never holds both slots', async () => {
      const gate = new CountGate(limits, 'full', 'yours full');
      const hostile = [deferred(), deferred(), deferred()];
      const started: string[] = [];
      const results = hostile.map((unit, i) =>
        gate.run(() => {
          started.push(`h${i}`);
          return unit.work();
        }, 'key:1'),
      );
      await flush();
      // One slot is free, but the caller's second and third wait for its first.
      expect(started).toEqual(['h0']);
      const other = deferred();
      const otherResult = gate.run(() => {
        started.push('o');
        return other.work();
      }, 'server:7');
      await flush();
      expect(started).toEqual(['h0', 'o']);
      hostile[0].end('h0');
      await flush();
      expect(started).toEqual(['h0', 'o', 'h1']);
      other.end('o');
      await flush();
      // The other caller's slot is free, but h2 waits for h1: one count of a caller at a time.
      expect(started).toEqual(['h0', 'o', 'h1']);
      hostile[1].end('h1');
      await flush();
      expect(started).toEqual(['h0', 'o', 'h1', 'h2']);
      hostile[2].end('h2');
      await expect(Promise.all([...results, otherResult])).resolves.toEqual(['h0', 'h1', 'h2', 'o']);
    });

    it("refuses at once a caller's count past its own part of the queue, with its own message; others still wait", async () => {
      const gate = new CountGate(limits, 'full', 'yours full');
      const held = deferred();
      const first = gate.run(held.work, 'key:1');
      const queued = [gate.run(held.work, 'key:1'), gate.run(held.work, 'key:1')];
      const third = await outcome(gate.run(held.work, 'key:1'));
      expect(third).toBe('refused: yours full');
      const blocker = deferred();
      const otherFirst = gate.run(blocker.work, 'key:2');
      const otherQueued = outcome(gate.run(() => Promise.resolve('o2'), 'key:2'));
      expect(gate.totals()).toEqual({ counted: 0, refused: 1 });
      held.end('h');
      blocker.end('o1');
      await expect(Promise.all([first, ...queued, otherFirst, otherQueued])).resolves.toEqual([
        'h',
        'h',
        'h',
        'o1',
        'o2',
      ]);
    });

    it('gives a freed slot to the first waiter whose caller has none running, in order', async () => {
      const gate = new CountGate(limits, 'full', 'yours full');
      const a = deferred();
      const b = deferred();
      const started: string[] = [];
      const tracked = (name: string, caller: string, unit: { work: () => Promise<string> }) =>
        gate.run(() => {
          started.push(name);
          return unit.work();
        }, caller);
      const runs = [tracked('a1', 'A', a), tracked('b1', 'B', b), tracked('a2', 'A', a), tracked('c1', 'C', a)];
      await flush();
      expect(started).toEqual(['a1', 'b1']);
      // B's slot frees: a2 is first in line but A is running, so C goes.
      b.end('b');
      await flush();
      expect(started).toEqual(['a1', 'b1', 'c1']);
      a.end('a');
      await Promise.all(runs);
      expect(started).toEqual(['a1', 'b1', 'c1', 'a2']);
    });

    it('lets counts without a caller run side by side, as before', async () => {
      const gate = new CountGate(limits);
      const unit = deferred();
      const started: number[] = [];
      const runs = [0, 1, 2].map((i) =>
        gate.run(() => {
          started.push(i);
          return unit.work();
        }),
      );
      await flush();
      expect(started).toEqual([0, 1]);
      unit.end('x');
      await Promise.all(runs);
      expect(started).toEqual([0, 1, 2]);
    });
  });
});
