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
});
