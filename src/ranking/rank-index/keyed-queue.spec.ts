import { KeyedQueue } from './keyed-queue';

/** A unit that records when it starts and ends, and ends when `release` is called. */
function unit(log: string[], name: string) {
  let release!: () => void;
  const done = new Promise<void>((resolve) => (release = resolve));
  return {
    release: () => release(),
    work: async () => {
      log.push(`${name} start`);
      await done;
      log.push(`${name} end`);
      return name;
    },
  };
}

const tick = () => new Promise((resolve) => setImmediate(resolve));

describe('KeyedQueue', () => {
  it('runs units of one key one after the other, in queue order, and units of other keys beside them', async () => {
    const queue = new KeyedQueue();
    const log: string[] = [];
    const [a1, a2, b1] = [unit(log, 'a1'), unit(log, 'a2'), unit(log, 'b1')];
    const results = [queue.run(['a'], a1.work), queue.run(['a'], a2.work), queue.run(['b'], b1.work)];
    await tick();
    expect(log).toEqual(['a1 start', 'b1 start']);
    a1.release();
    await tick();
    expect(log).toEqual(['a1 start', 'b1 start', 'a1 end', 'a2 start']);
    a2.release();
    b1.release();
    expect(await Promise.all(results)).toEqual(['a1', 'a2', 'b1']);
    await tick();
    expect(queue.size).toBe(0);
  });

  it('starts a unit of several keys after every earlier unit of any of them, and a failed unit does not block the next', async () => {
    const queue = new KeyedQueue();
    const log: string[] = [];
    const [a, b] = [unit(log, 'a'), unit(log, 'b')];
    const first = queue.run(['a'], a.work);
    const second = queue.run(['b'], b.work);
    const both = queue.run(['a', 'b'], () => Promise.reject(new Error('refused')));
    const after = queue.run(['b'], () => Promise.resolve('after'));
    a.release();
    await first;
    await tick();
    expect(log).toEqual(['a start', 'b start', 'a end']);
    b.release();
    await second;
    await expect(both).rejects.toThrow('refused');
    expect(await after).toBe('after');
    await tick();
    expect(queue.size).toBe(0);
  });
});
