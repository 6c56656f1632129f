import { OrderStatisticSet } from './order-statistic-set';

type Key = [number, number, number];

const compare = (x: Key, y: Key) => x[0] - y[0] || x[1] - y[1] || x[2] - y[2];

/** A deterministic generator, so a failure can be replayed. */
function random(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (Math.imul(state ^ (state >>> 15), 2246822507) + 0x6d2b79f5) >>> 0;
    return state / 2 ** 32;
  };
}

describe('OrderStatisticSet', () => {
  it('counts the keys below a key, comparing the three parts in order', () => {
    const set = new OrderStatisticSet();
    expect(set.countBelow(0, 0, 0)).toBe(0);
    expect(set.insert(-12, 0, 5)).toBe(true);
    expect(set.insert(-12, 0, 3)).toBe(true);
    expect(set.insert(-15, 0, 9)).toBe(true);
    expect(set.insert(-12, 0, 3)).toBe(false);
    expect([...set.keys()]).toEqual([
      [-15, 0, 9],
      [-12, 0, 3],
      [-12, 0, 5],
    ]);
    expect(set.countBelow(-15, 0, 9)).toBe(0);
    expect(set.countBelow(-12, 0, 3)).toBe(1);
    expect(set.countBelow(-12, 0, 4)).toBe(2); // a key that is not in the set
    expect(set.countBelow(-12, 0, 5)).toBe(2);
    expect(set.countBelow(0, 0, 0)).toBe(3);
    expect(set.has(-12, 0, 5)).toBe(true);
    expect(set.delete(-12, 0, 5)).toBe(true);
    expect(set.delete(-12, 0, 5)).toBe(false);
    expect(set.has(-12, 0, 5)).toBe(false);
    expect(set.size).toBe(2);
  });

  it('orders by the second part, then the third, when the first ties (acc, then time, then uid)', () => {
    const set = new OrderStatisticSet();
    set.insert(-100, 2_000, 7);
    set.insert(-100, 1_000, 9);
    set.insert(-100, 1_000, 8);
    set.insert(-99.5, 500, 1);
    expect([...set.keys()].map((key) => key[2])).toEqual([8, 9, 7, 1]);
  });

  it('treats -0 and 0 as the same key (ATP 0 negated)', () => {
    const set = new OrderStatisticSet();
    set.insert(-0, 0, 1);
    expect(set.has(0, 0, 1)).toBe(true);
    expect(set.insert(0, 0, 1)).toBe(false);
  });

  it('agrees with a sorted array through 20,000 random inserts and deletes across block splits', () => {
    const next = random(42);
    const set = new OrderStatisticSet();
    const reference: Key[] = [];
    const position = (key: Key) => {
      let lo = 0;
      let hi = reference.length;
      while (lo < hi) {
        const mid = (lo + hi) >>> 1;
        if (compare(reference[mid], key) < 0) lo = mid + 1;
        else hi = mid;
      }
      return lo;
    };
    const mismatches: string[] = [];
    for (let step = 0; step < 20_000; step++) {
      // Few distinct first parts, so ties on it (and on the second) are frequent.
      const key: Key = [-Math.floor(next() * 50), Math.floor(next() * 20), Math.floor(next() * 5_000)];
      const at = position(key);
      const present = at < reference.length && compare(reference[at], key) === 0;
      if (next() < 0.3 && reference.length > 0) {
        const victim = reference[Math.floor(next() * reference.length)];
        reference.splice(position(victim), 1);
        if (!set.delete(...victim)) mismatches.push(`delete ${victim.join(',')} at ${step}`);
      } else {
        if (!present) reference.splice(at, 0, key);
        if (set.insert(...key) === present) mismatches.push(`insert ${key.join(',')} at ${step}`);
      }
      if (step % 97 === 0) {
        const probe: Key = [-Math.floor(next() * 51), Math.floor(next() * 21), Math.floor(next() * 5_001)];
        if (set.countBelow(...probe) !== position(probe)) mismatches.push(`countBelow ${probe.join(',')} at ${step}`);
      }
    }
    expect(mismatches).toEqual([]);
    expect(set.size).toBe(reference.length);
    expect([...set.keys()]).toEqual(reference);
    for (let i = 0; i < reference.length; i += 37) expect(set.countBelow(...reference[i])).toBe(i);
  });

  it('selects keys by position (at, slice), clamped to the set, across blocks after random inserts and deletes', () => {
    const next = random(11);
    const set = new OrderStatisticSet();
    const present = new Map<string, Key>();
    for (let step = 0; step < 6_000; step++) {
      const key: Key = [-Math.floor(next() * 40), Math.floor(next() * 10), Math.floor(next() * 3_000)];
      if (next() < 0.25) {
        set.delete(...key);
        present.delete(key.join());
      } else {
        set.insert(...key);
        present.set(key.join(), key);
      }
    }
    const reference = [...present.values()].sort(compare);
    expect(reference.length).toBeGreaterThan(2_000); // several blocks
    expect(set.size).toBe(reference.length);
    const mismatches: string[] = [];
    for (let i = 0; i < reference.length; i++)
      if (compare(set.at(i) ?? [NaN, NaN, NaN], reference[i]) !== 0) mismatches.push(`at ${i}`);
    expect(mismatches).toEqual([]);
    expect(set.at(-1)).toBeNull();
    expect(set.at(reference.length)).toBeNull();
    for (const [start, end] of [
      [0, 13],
      [500, 1_100],
      [reference.length - 7, reference.length + 5],
      [-4, 3],
      [10, 10],
      [20, 5],
    ]) {
      expect(set.slice(start, end)).toEqual(reference.slice(Math.max(0, start), Math.max(0, end)));
    }
    expect(set.slice(0, reference.length)).toEqual(reference);
  });

  it('selects by position in a set built from triples and in an empty set', () => {
    const set = OrderStatisticSet.fromTriples(Float64Array.from([5, 0, 1, -3, 0, 2, 5, 0, 0]));
    expect(set.slice(0, 3)).toEqual([
      [-3, 0, 2],
      [5, 0, 0],
      [5, 0, 1],
    ]);
    expect(set.at(1)).toEqual([5, 0, 0]);
    expect(new OrderStatisticSet().at(0)).toBeNull();
    expect(new OrderStatisticSet().slice(0, 10)).toEqual([]);
  });

  it('empties completely and fills again', () => {
    const set = new OrderStatisticSet();
    for (let i = 0; i < 2_000; i++) set.insert(i, 0, 0);
    for (let i = 0; i < 2_000; i++) expect(set.delete(i, 0, 0)).toBe(true);
    expect(set.size).toBe(0);
    expect(set.countBelow(5, 0, 0)).toBe(0);
    set.insert(3, 0, 0);
    expect(set.countBelow(5, 0, 0)).toBe(1);
  });

  it('answers in logarithmic time at a million keys', () => {
    const set = new OrderStatisticSet();
    const next = random(7);
    for (let i = 0; i < 1_000_000; i++) set.insert(-Math.floor(next() * 300_000), 0, i);
    const started = process.hrtime.bigint();
    let sink = 0;
    for (let i = 0; i < 100_000; i++) sink += set.countBelow(-Math.floor(next() * 300_000), 0, i);
    const perQueryMicros = Number(process.hrtime.bigint() - started) / 1e3 / 100_000;
    expect(sink).toBeGreaterThan(0);
    expect(perQueryMicros).toBeLessThan(50);
  });
});

describe('OrderStatisticSet.fromTriples', () => {
  it('builds the same set as inserting the keys one by one, duplicates once, and keeps working after', () => {
    const next = random(3);
    const keys: Key[] = Array.from({ length: 5_000 }, () => [
      -Math.floor(next() * 40),
      Math.floor(next() * 10),
      Math.floor(next() * 100),
    ]);
    const triples = new Float64Array(keys.flat());
    const built = OrderStatisticSet.fromTriples(triples);
    const inserted = new OrderStatisticSet();
    for (const key of keys) inserted.insert(...key);
    expect(built.size).toBe(inserted.size);
    expect([...built.keys()]).toEqual([...inserted.keys()]);
    for (let i = 0; i < 200; i++) {
      const probe: Key = [-Math.floor(next() * 41), Math.floor(next() * 11), Math.floor(next() * 101)];
      expect(built.countBelow(...probe)).toBe(inserted.countBelow(...probe));
    }
    for (const key of keys.slice(0, 1_000)) {
      built.delete(...key);
      inserted.delete(...key);
    }
    built.insert(-100, 0, 0);
    inserted.insert(-100, 0, 0);
    expect([...built.keys()]).toEqual([...inserted.keys()]);
  });

  it('builds an empty set from no keys', () => {
    const set = OrderStatisticSet.fromTriples(new Float64Array(0));
    expect(set.size).toBe(0);
    expect(set.countBelow(1, 2, 3)).toBe(0);
    expect(set.insert(1, 2, 3)).toBe(true);
    expect(set.countBelow(5, 0, 0)).toBe(1);
  });
});
