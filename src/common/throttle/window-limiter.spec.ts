import { LocalWindows } from './window-limiter';

describe('LocalWindows (the process count of WindowLimiter)', () => {
  let windows: LocalWindows;
  beforeEach(() => {
    windows = new LocalWindows();
  });
  afterEach(() => windows.close());

  it('counts calls in a window from the first one, and refuses the call over the limit for a window', () => {
    const t0 = 1_000_000;
    expect(windows.hit('k', 2, 60_000, t0)).toEqual({
      limit: 2,
      remaining: 1,
      resetSeconds: 60,
      retryAfterSeconds: null,
    });
    expect(windows.hit('k', 2, 60_000, t0 + 10_000)).toEqual({
      limit: 2,
      remaining: 0,
      resetSeconds: 50,
      retryAfterSeconds: null,
    });
    // The third call, at 59 s: blocked for a whole window from now.
    expect(windows.hit('k', 2, 60_000, t0 + 59_000)).toEqual({
      limit: 2,
      remaining: 0,
      resetSeconds: 60,
      retryAfterSeconds: 60,
    });
    expect(windows.hit('k', 2, 60_000, t0 + 100_000).retryAfterSeconds).toBe(19);
    // Another key is not concerned.
    expect(windows.hit('other', 2, 60_000, t0 + 100_000).retryAfterSeconds).toBeNull();
  });

  it('lets a caller in again once the block is over, when the calls of the new window are within the limit', () => {
    const t0 = 0;
    windows.hit('k', 1, 1_000, t0);
    expect(windows.hit('k', 1, 1_000, t0 + 100).retryAfterSeconds).toBe(1);
    // The block ended at 1,100 and the window of 0 is over: this call starts a new one.
    expect(windows.hit('k', 1, 1_000, t0 + 1_200)).toEqual({
      limit: 1,
      remaining: 0,
      resetSeconds: 1,
      retryAfterSeconds: null,
    });
  });

  it('keeps counting while blocked: a caller that ignores Retry-After stays blocked', () => {
    windows.hit('k', 1, 1_000, 0);
    windows.hit('k', 1, 1_000, 500); // blocked until 1,500
    windows.hit('k', 1, 1_000, 1_200); // new window from 1,200, blocked: 1 call
    windows.hit('k', 1, 1_000, 1_300); // 2 calls in that window
    // At 1,600 the block is over, but the window of 1,200 holds 3 calls over a limit of 1.
    expect(windows.hit('k', 1, 1_000, 1_600).retryAfterSeconds).toBe(1);
  });
});
