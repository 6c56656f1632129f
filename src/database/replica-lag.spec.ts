import { lsnBytes, ReplicaLag } from './replica-lag';

describe('ReplicaLag', () => {
  it('reads WAL positions as bytes', () => {
    expect(lsnBytes('0/0')).toBe(0n);
    expect(lsnBytes('16/B374D848')).toBe(0x16b374d848n);
    expect(lsnBytes('1/0')).toBe(0x100000000n);
    expect(() => lsnBytes('16-B374')).toThrow('Not a WAL position: 16-B374');
  });

  it('ages from the start until the replica is first seen to cover a primary position', () => {
    const lag = new ReplicaLag(1_000);
    expect(lag.lagMs(3_000)).toBe(2_000);
    lag.primaryAt(3_000, 100n);
    lag.replayed(99n);
    expect(lag.freshAt()).toBeNull();
    expect(lag.lagMs(3_500)).toBe(2_500);
    lag.replayed(100n);
    expect(lag.freshAt()).toBe(3_000);
    expect(lag.lagMs(3_500)).toBe(500);
  });

  it('stays fresh on an idle primary (no new WAL) and ages from the last position covered while replay stands still', () => {
    const lag = new ReplicaLag(0);
    for (let at = 1_000; at <= 5_000; at += 1_000) {
      lag.primaryAt(at, 500n);
      lag.replayed(500n);
      expect(lag.lagMs(at)).toBe(0);
    }
    // The primary writes; the replica stays at 500 (replay paused).
    for (let at = 6_000; at <= 9_000; at += 1_000) {
      lag.primaryAt(at, BigInt(at));
      lag.replayed(500n);
    }
    expect(lag.freshAt()).toBe(5_000);
    expect(lag.lagMs(9_000)).toBe(4_000);
    // Replay resumes part-way (covers the primary as of 7 s), then all of it.
    lag.primaryAt(10_000, 10_000n);
    lag.replayed(7_500n);
    expect(lag.freshAt()).toBe(7_000);
    lag.primaryAt(11_000, 10_000n);
    lag.replayed(10_000n);
    expect(lag.lagMs(11_000)).toBe(0);
  });

  it('never moves its freshness back, and keeps a bounded number of samples', () => {
    const lag = new ReplicaLag(0);
    lag.primaryAt(1_000, 10n);
    lag.replayed(10n);
    for (let at = 2_000; at < 2_000 + 10_000; at++) lag.primaryAt(at, BigInt(at));
    lag.replayed(5n);
    expect(lag.freshAt()).toBe(1_000);
    lag.replayed(11_999n);
    expect(lag.freshAt()).toBe(11_999);
  });
});
