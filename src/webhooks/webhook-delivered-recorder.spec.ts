import { DeliveredOutcome, DeliveredRecorder } from './webhook-delivered-recorder';

/** A write the test finishes by hand, so that what queues while one runs is seen. */
function manualWrites() {
  const calls: { group: string[]; finish: (error?: Error) => void }[] = [];
  const write = (group: readonly DeliveredOutcome[]) =>
    new Promise<void>((resolve, reject) =>
      calls.push({ group: group.map((outcome) => outcome.id), finish: (error) => (error ? reject(error) : resolve()) }),
    );
  return { calls, write };
}

const tick = () => new Promise((resolve) => setImmediate(resolve));

describe('DeliveredRecorder (group commit of successful deliveries)', () => {
  it('writes a lone success at once, and every success queued while a write runs in the next one', async () => {
    const { calls, write } = manualWrites();
    const recorded: string[][] = [];
    const recorder = new DeliveredRecorder(
      write,
      (group) => recorded.push(group.map((o) => o.id)),
      () => undefined,
    );
    recorder.add({ id: 'a', status: 200 });
    expect(calls.map((call) => call.group)).toEqual([['a']]);
    recorder.add({ id: 'b', status: 204 });
    recorder.add({ id: 'c', status: 200 });
    expect(calls).toHaveLength(1);
    calls[0].finish();
    await tick();
    expect(calls.map((call) => call.group)).toEqual([['a'], ['b', 'c']]);
    calls[1].finish();
    await recorder.idle();
    expect(recorded).toEqual([['a'], ['b', 'c']]);
    recorder.add({ id: 'd', status: 200 });
    expect(calls.map((call) => call.group)).toEqual([['a'], ['b', 'c'], ['d']]);
    calls[2].finish();
    await recorder.idle();
    expect(recorded).toEqual([['a'], ['b', 'c'], ['d']]);
  });

  it('reports a group it could not write, and goes on with the next', async () => {
    const { calls, write } = manualWrites();
    const failed: string[][] = [];
    const recorded: string[][] = [];
    const recorder = new DeliveredRecorder(
      write,
      (group) => recorded.push(group.map((o) => o.id)),
      (group, error) => failed.push([...group.map((o) => o.id), (error as Error).message]),
    );
    recorder.add({ id: 'a', status: 200 });
    recorder.add({ id: 'b', status: 200 });
    calls[0].finish(new Error('connection lost'));
    await tick();
    calls[1].finish();
    await recorder.idle();
    expect(failed).toEqual([['a', 'connection lost']]);
    expect(recorded).toEqual([['b']]);
  });

  it('idle() waits for successes added while it waits', async () => {
    const { calls, write } = manualWrites();
    const recorder = new DeliveredRecorder(
      write,
      () => undefined,
      () => undefined,
    );
    recorder.add({ id: 'a', status: 200 });
    let idle = false;
    const waiting = recorder.idle().then(() => (idle = true));
    recorder.add({ id: 'b', status: 200 });
    calls[0].finish();
    await tick();
    expect(idle).toBe(false);
    calls[1].finish();
    await waiting;
    expect(idle).toBe(true);
  });

  it('writes at most 500 in one statement', async () => {
    const { calls, write } = manualWrites();
    const recorder = new DeliveredRecorder(
      write,
      () => undefined,
      () => undefined,
    );
    recorder.add({ id: 'first', status: 200 });
    for (let i = 0; i < 600; i++) recorder.add({ id: String(i), status: 200 });
    calls[0].finish();
    await tick();
    expect(calls[1].group).toHaveLength(500);
    calls[1].finish();
    await tick();
    expect(calls[2].group).toHaveLength(100);
    calls[2].finish();
    await recorder.idle();
  });
});
