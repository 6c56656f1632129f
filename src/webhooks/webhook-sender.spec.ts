import { sendDelivery, TaskGate } from './webhook-sender';

describe('sendDelivery', () => {
  it('answers a request Node refuses to make as a connection failure, with no timer left to fire', async () => {
    // The admin DTO takes only http(s) URLs; a stored URL of another scheme must still not throw
    // later in the delivery thread (the timeout once fired on a request that was never created).
    const result = await sendDelivery('ftp://93.184.216.34/', {}, '{}', { allowed: [] }, 50);
    expect(result).toEqual({ status: null, ok: false, outcome: 'connection', error: 'not sent: ERR_INVALID_PROTOCOL' });
    await new Promise((resolve) => setTimeout(resolve, 120));
  });
});

describe('TaskGate (the delivery thread’s DNS lookups)', () => {
  it('runs at most its limit at once, the rest in arrival order as earlier ones finish', () => {
    const gate = new TaskGate(2);
    const started: number[] = [];
    const done: Array<() => void> = [];
    for (let i = 0; i < 5; i++)
      gate.run((release) => {
        started.push(i);
        done[i] = release;
      });
    expect(started).toEqual([0, 1]);
    expect(gate.counts).toEqual({ running: 2, waiting: 3 });
    done[1]();
    done[1](); // a second call releases nothing more
    expect(started).toEqual([0, 1, 2]);
    expect(gate.counts).toEqual({ running: 2, waiting: 2 });
    done[0]();
    done[2]();
    expect(started).toEqual([0, 1, 2, 3, 4]);
    done[3]();
    done[4]();
    expect(gate.counts).toEqual({ running: 0, waiting: 0 });
  });

  it('drops a waiting task abandoned before its turn, and starts the next live one in its place', () => {
    const gate = new TaskGate(1);
    const started: number[] = [];
    const done: Array<() => void> = [];
    const gone = new Set<number>();
    for (let i = 0; i < 4; i++)
      gate.run(
        (release) => {
          started.push(i);
          done[i] = release;
        },
        () => gone.has(i),
      );
    expect(gate.counts).toEqual({ running: 1, waiting: 3 });
    // Tasks 1 and 2 time out while task 0 holds the only slot (a slow name server).
    gone.add(1);
    gone.add(2);
    done[0]();
    expect(started).toEqual([0, 3]);
    expect(gate.counts).toEqual({ running: 1, waiting: 0 });
    done[3]();
    expect(gate.counts).toEqual({ running: 0, waiting: 0 });
  });
});
