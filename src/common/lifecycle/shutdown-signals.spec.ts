import { StopSignals } from './shutdown-signals';

const silent = { log: () => undefined, warn: () => undefined, error: () => undefined };

/** A StopSignals on this process whose exits are recorded instead of made. */
function signals() {
  const exits: number[] = [];
  const stop = new StopSignals((code) => exits.push(code), silent).install();
  return { stop, exits };
}

const flush = () => new Promise((resolve) => setImmediate(resolve));

describe('StopSignals', () => {
  let open: StopSignals | null = null;
  afterEach(() => {
    open?.uninstall();
    open = null;
  });

  it('exits 0 at once on a signal before the start began (nothing is open)', () => {
    const { stop, exits } = signals();
    open = stop;
    process.emit('SIGTERM', 'SIGTERM');
    expect(exits).toEqual([0]);
    expect(stop.startAborted.aborted).toBe(false);
  });

  it('during the start, aborts it without exiting; a second signal exits with 128 + its number', () => {
    const { stop, exits } = signals();
    open = stop;
    stop.beginStart(silent);
    process.emit('SIGTERM', 'SIGTERM');
    expect(stop.startAborted.aborted).toBe(true);
    expect(stop.startAborted.reason).toBe('SIGTERM');
    expect(exits).toEqual([]);
    process.emit('SIGINT', 'SIGINT');
    expect(exits).toEqual([130]);
  });

  it('a signal during the start closes the service as soon as it is handed over, then exits 0', async () => {
    const { stop, exits } = signals();
    open = stop;
    stop.beginStart(silent);
    process.emit('SIGINT', 'SIGINT');
    let closed = 0;
    stop.serve({ close: () => Promise.resolve(void closed++) });
    await flush();
    expect(closed).toBe(1);
    expect(exits).toEqual([0]);
  });

  it('once serving, the first signal closes the service (exit 0, or 1 when the close fails); a second exits 143', async () => {
    const { stop, exits } = signals();
    open = stop;
    stop.beginStart(silent);
    let fail!: (error: Error) => void;
    stop.serve({ close: () => new Promise((_resolve, reject) => (fail = reject)) });
    process.emit('SIGTERM', 'SIGTERM');
    expect(exits).toEqual([]);
    process.emit('SIGTERM', 'SIGTERM');
    expect(exits).toEqual([143]);
    fail(new Error('pool did not close'));
    await flush();
    expect(exits).toEqual([143, 1]);
  });
});
