import { CompactKeySet, CompactKeySetBuilder, LOAD_FILL, MAX_BLOCK } from './compact-key-set';
import type { RankKey } from './rank-index';
import { CHART_KEY_CODEC, RankKeyCodec, SITE_KEY_CODEC, TIME_EPOCH_MS } from './rank-key-codec';
import { compareKeys, RankKeySet, RankKeySetBuilder } from './rank-key-set';

/** A deterministic generator, so a failure can be replayed. */
function random(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (Math.imul(state ^ (state >>> 15), 2246822507) + 0x6d2b79f5) >>> 0;
    return state / 2 ** 32;
  };
}

const encode = (codec: RankKeyCodec, key: RankKey): number[] | null => {
  const out = new Uint32Array(3);
  return codec.encode(...key, out) ? [...out] : null;
};
const compareWords = (x: number[], y: number[]) => x[0] - y[0] || x[1] - y[1] || x[2] - y[2];

/** Position of the first reference key not below `key`. */
function lowerBound(reference: RankKey[], key: RankKey): number {
  let lo = 0;
  let hi = reference.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (compareKeys(reference[mid], key) < 0) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

const T0 = Date.UTC(2026, 0, 1);

describe('rank key codecs', () => {
  it('packs a chart key and gives the same numbers back', () => {
    const words = encode(CHART_KEY_CODEC, [-98.75, T0, 4242]);
    expect(words).not.toBeNull();
    expect(CHART_KEY_CODEC.decode(...(words as [number, number, number]))).toEqual([-98.75, T0, 4242]);
    expect(encode(CHART_KEY_CODEC, [-0, TIME_EPOCH_MS, 0])).toEqual([1_000_000 * 4096, 0, 0]);
    expect(encode(CHART_KEY_CODEC, [-100, TIME_EPOCH_MS + 2 ** 44 - 1, 2 ** 32 - 1])).toEqual([
      4095,
      2 ** 32 - 1,
      2 ** 32 - 1,
    ]);
  });

  it('refuses chart keys it cannot give back exactly', () => {
    expect(encode(CHART_KEY_CODEC, [-98.12345, T0, 1])).toBeNull(); // five decimals
    expect(encode(CHART_KEY_CODEC, [-(1 / 3) * 100, T0, 1])).toBeNull(); // a binary fraction
    expect(encode(CHART_KEY_CODEC, [-100.0001, T0, 1])).toBeNull();
    expect(encode(CHART_KEY_CODEC, [0.5, T0, 1])).toBeNull(); // negative acc
    expect(encode(CHART_KEY_CODEC, [-99, TIME_EPOCH_MS - 1, 1])).toBeNull(); // before 2000
    expect(encode(CHART_KEY_CODEC, [-99, TIME_EPOCH_MS + 2 ** 44, 1])).toBeNull(); // after 2557
    expect(encode(CHART_KEY_CODEC, [-99, T0 + 0.5, 1])).toBeNull();
    expect(encode(CHART_KEY_CODEC, [-99, T0, 2 ** 32])).toBeNull(); // uid past 32 bits
    expect(encode(CHART_KEY_CODEC, [NaN, T0, 1])).toBeNull();
  });

  it('packs a site key and refuses what does not fit', () => {
    expect(SITE_KEY_CODEC.decode(...(encode(SITE_KEY_CODEC, [-123_456, 0, 7]) as [number, number, number]))).toEqual([
      -123_456, 0, 7,
    ]);
    expect(encode(SITE_KEY_CODEC, [-1.5, 0, 7])).toBeNull(); // not ten-thousandths
    expect(encode(SITE_KEY_CODEC, [5, 0, 7])).toBeNull(); // negative ATP
    expect(encode(SITE_KEY_CODEC, [-5, 1, 7])).toBeNull(); // the site order's middle part is 0
    expect(encode(SITE_KEY_CODEC, [-(2 ** 40), 0, 7])).toBeNull();
    expect(encode(SITE_KEY_CODEC, [-5, 0, -1])).toBeNull();
  });

  it('keeps the order of the keys in the order of the words, and round-trips every key it packs', () => {
    const next = random(5);
    for (const [codec, make] of [
      [
        CHART_KEY_CODEC,
        (): RankKey => [
          -Math.round(next() * 1_000_000) / 10_000,
          TIME_EPOCH_MS + Math.floor(next() * 2 ** 44),
          Math.floor(next() * 2 ** 32),
        ],
      ],
      [SITE_KEY_CODEC, (): RankKey => [-Math.floor(next() * 1e10), 0, Math.floor(next() * 2 ** 32)]],
    ] as Array<[RankKeyCodec, () => RankKey]>) {
      const mismatches: string[] = [];
      for (let i = 0; i < 20_000; i++) {
        const x = make();
        // Ties on the first part, then the second, are frequent.
        const y: RankKey = next() < 0.5 ? [x[0], next() < 0.5 ? x[1] : make()[1], make()[2]] : make();
        if (codec === SITE_KEY_CODEC) y[1] = 0;
        const wx = encode(codec, x);
        const wy = encode(codec, y);
        if (!wx || !wy) {
          mismatches.push(`not packed: ${x.join()} / ${y.join()}`);
          continue;
        }
        if (Math.sign(compareWords(wx, wy)) !== compareKeys(x, y)) mismatches.push(`order ${x.join()} / ${y.join()}`);
        if (compareKeys(codec.decode(wx[0], wx[1], wx[2]), x) !== 0) mismatches.push(`decode ${x.join()}`);
      }
      expect(mismatches).toEqual([]);
    }
  });
});

describe('CompactKeySet', () => {
  it('agrees with a sorted array through random inserts and deletes across block splits', () => {
    const next = random(42);
    const set = new CompactKeySet();
    const reference: number[][] = [];
    const position = (key: number[]) => {
      let lo = 0;
      let hi = reference.length;
      while (lo < hi) {
        const mid = (lo + hi) >>> 1;
        if (compareWords(reference[mid], key) < 0) lo = mid + 1;
        else hi = mid;
      }
      return lo;
    };
    const mismatches: string[] = [];
    for (let step = 0; step < 30_000; step++) {
      const key = [Math.floor(next() * 50), Math.floor(next() * 20), Math.floor(next() * 5_000)];
      const at = position(key);
      const present = at < reference.length && compareWords(reference[at], key) === 0;
      if (next() < 0.3 && reference.length > 0) {
        const victim = reference[Math.floor(next() * reference.length)];
        reference.splice(position(victim), 1);
        if (!set.delete(victim[0], victim[1], victim[2])) mismatches.push(`delete ${victim.join()} at ${step}`);
      } else {
        if (!present) reference.splice(at, 0, key);
        if (set.insert(key[0], key[1], key[2]) === present) mismatches.push(`insert ${key.join()} at ${step}`);
      }
      if (step % 97 === 0) {
        const probe = [Math.floor(next() * 51), Math.floor(next() * 21), Math.floor(next() * 5_001)];
        if (set.countBelow(probe[0], probe[1], probe[2]) !== position(probe)) mismatches.push(`countBelow at ${step}`);
        if (set.has(probe[0], probe[1], probe[2]) !== (compareWords(reference[position(probe)] ?? [-1], probe) === 0))
          mismatches.push(`has at ${step}`);
      }
    }
    expect(mismatches).toEqual([]);
    expect(reference.length).toBeGreaterThan(3 * MAX_BLOCK); // several splits happened
    expect(set.size).toBe(reference.length);
    expect([...set.keys()]).toEqual(reference);
    expect(set.slice(500, 2_600)).toEqual(reference.slice(500, 2_600));
    expect(set.slice(reference.length - 3, reference.length + 9)).toEqual(reference.slice(reference.length - 3));
    for (let i = 0; i < reference.length; i += 37)
      expect(set.countBelow(reference[i][0], reference[i][1], reference[i][2])).toBe(i);
  });

  it('builds blocks filled to LOAD_FILL of MAX_BLOCK from sorted keys, a small last block sized to it, and keeps working after', () => {
    const builder = new CompactKeySetBuilder();
    const count = 10 * LOAD_FILL + 17;
    for (let i = 0; i < count; i++) builder.append(i >>> 4, 0, i);
    const set = builder.finish();
    expect(set.size).toBe(count);
    expect(set.bytes).toBe(10 * MAX_BLOCK * 12 + (17 + 8) * 12);
    expect(set.countBelow(100, 0, 1_600)).toBe(1_600);
    expect(set.insert(100, 0, 1_600)).toBe(false);
    expect(set.insert(0, 1, 0)).toBe(true); // between (0, 0, 15) and (1, 0, 16)
    expect(set.countBelow(1, 0, 0)).toBe(17);
    expect(set.slice(15, 18)).toEqual([
      [0, 0, 15],
      [0, 1, 0],
      [1, 0, 16],
    ]);
  });

  describe('a full block', () => {
    /** A set of `blocks` loaded blocks over the even second words 0, 2, 4, …; odd ones insert between. */
    const loaded = (blocks: number) => {
      const builder = new CompactKeySetBuilder();
      for (let i = 0; i < blocks * LOAD_FILL; i++) builder.append(0, 2 * i, 0);
      return builder.finish();
    };
    const counts = (set: CompactKeySet) => [...set.usedBlocks()].map((block) => block.length / 3);
    const buffers = (set: CompactKeySet) => new Set([...set.usedBlocks()].map((block) => block.buffer));
    const sorted = (set: CompactKeySet) =>
      [...set.keys()].every((key, i, keys) => i === 0 || keys[i - 1][1] < key[1]) &&
      set.size === [...set.keys()].length;

    it('fills its room in place, then hands its last key to the next block, never moving to a new buffer', () => {
      const set = loaded(3);
      const before = buffers(set);
      expect(set.bytes).toBe(3 * MAX_BLOCK * 12);
      const room = MAX_BLOCK - LOAD_FILL;
      for (let i = 0; i < room; i++) expect(set.insert(0, 2 * i + 1, 0)).toBe(true);
      expect(counts(set)).toEqual([MAX_BLOCK, LOAD_FILL, LOAD_FILL]);
      expect(set.insert(0, 2 * room + 1, 0)).toBe(true);
      expect(counts(set)).toEqual([MAX_BLOCK, LOAD_FILL + 1, LOAD_FILL]);
      expect(buffers(set)).toEqual(before);
      expect(set.bytes).toBe(3 * MAX_BLOCK * 12);
      expect(sorted(set)).toBe(true);
      // The key that moved (the first block's old last one) answers its place from the next block.
      expect(set.countBelow(0, 2 * (LOAD_FILL - 1), 0)).toBe(LOAD_FILL - 1 + room + 1);
      expect(set.has(0, 2 * (LOAD_FILL - 1), 0)).toBe(true);
    });

    it('hands its first key to the previous block when only that one has room, or ends the previous block with a key below its own', () => {
      const set = loaded(2);
      const room = MAX_BLOCK - LOAD_FILL;
      for (let i = 0; i < room; i++) expect(set.insert(0, 2 * (LOAD_FILL + i) + 1, 0)).toBe(true);
      expect(counts(set)).toEqual([LOAD_FILL, MAX_BLOCK]);
      expect(set.insert(0, 2 * (LOAD_FILL + room) + 1, 0)).toBe(true); // inside the last block
      expect(counts(set)).toEqual([LOAD_FILL + 1, MAX_BLOCK]);
      // The last block now starts at 2·LOAD_FILL + 1 (its old first key went back). Take that key out
      // and fill the block again, so that putting it back sorts first in a full block.
      expect(set.delete(0, 2 * LOAD_FILL + 1, 0)).toBe(true);
      expect(set.insert(0, 2 * (LOAD_FILL + room + 1) + 1, 0)).toBe(true);
      expect(counts(set)).toEqual([LOAD_FILL + 1, MAX_BLOCK]);
      expect(set.insert(0, 2 * LOAD_FILL + 1, 0)).toBe(true); // sorts first in the full block: ends the previous one
      expect(counts(set)).toEqual([LOAD_FILL + 2, MAX_BLOCK]);
      expect(set.bytes).toBe(2 * MAX_BLOCK * 12);
      expect(sorted(set)).toBe(true);
      expect(set.countBelow(0, 2 * LOAD_FILL + 1, 0)).toBe(LOAD_FILL + 1);
    });

    it('splits when no neighbour has room: the lower half stays in its buffer, the upper half takes one new one', () => {
      const set = loaded(1);
      const before = buffers(set);
      for (let i = 0; i < MAX_BLOCK - LOAD_FILL; i++) set.insert(0, 2 * i + 1, 0);
      expect(set.insert(0, 2 * (MAX_BLOCK - LOAD_FILL) + 1, 0)).toBe(true);
      expect(counts(set)).toEqual([MAX_BLOCK / 2 + 1, MAX_BLOCK / 2]); // the new key sorts in the lower half
      const after = buffers(set);
      expect(after.size).toBe(2);
      for (const buffer of before) expect(after.has(buffer)).toBe(true);
      expect(set.bytes).toBe(2 * MAX_BLOCK * 12);
      expect(sorted(set)).toBe(true);
    });
  });

  it('grows a small block by an eighth until it has half a block, then gives it a whole block', () => {
    const set = new CompactKeySet();
    const sizes: number[] = [];
    const inserted = MAX_BLOCK / 2 + 40; // past half a block, short of full
    for (let i = 0; i < inserted; i++) {
      set.insert(0, i, 0);
      if (sizes[sizes.length - 1] !== set.bytes) sizes.push(set.bytes);
    }
    // 8 keys, then each time it is full: the keys plus an eighth (at least 8), until half a block.
    const expected = [8];
    for (let keys = 9; expected[expected.length - 1] < MAX_BLOCK; keys = expected[expected.length - 1] + 1)
      expected.push(keys >= MAX_BLOCK / 2 ? MAX_BLOCK : keys + Math.max(8, keys >>> 3));
    expect(sizes.map((bytes) => bytes / 12)).toEqual(expected);
    expect(expected.slice(0, 4)).toEqual([8, 17, 26, 35]);
    expect([...set.keys()]).toEqual(Array.from({ length: inserted }, (_, i) => [0, i, 0]));
  });

  it('refuses keys appended out of order or twice', () => {
    const builder = new CompactKeySetBuilder();
    builder.append(1, 2, 3);
    expect(() => builder.append(1, 2, 3)).toThrow('rank keys out of order');
    expect(() => builder.append(1, 1, 9)).toThrow('rank keys out of order');
  });

  it('removes the keys of given uids in one pass, dropping emptied blocks', () => {
    const builder = new CompactKeySetBuilder();
    for (let i = 0; i < 5 * LOAD_FILL; i++) builder.append(0, i, i < LOAD_FILL ? 7 : i % 5);
    const set = builder.finish();
    const removed = set.removeWhereThird((uid) => uid === 7 || uid === 3);
    const expected = [...Array(5 * LOAD_FILL).keys()].filter((i) => i >= LOAD_FILL && i % 5 !== 3);
    expect(removed).toBe(5 * LOAD_FILL - expected.length);
    expect([...set.keys()]).toEqual(expected.map((i) => [0, i, i % 5]));
    expect(set.countBelow(0, expected[100], 0)).toBe(100);
    expect(set.insert(0, 0, 7)).toBe(true);
    expect(set.slice(0, 2)).toEqual([
      [0, 0, 7],
      [0, expected[0], expected[0] % 5],
    ]);
  });
});

describe('RankKeySet', () => {
  /** Chart keys, some of which do not pack (an acc with five decimals, a uid past 32 bits, a time before 2000). */
  function chartKey(next: () => number): RankKey {
    const roll = next();
    const acc =
      roll < 0.05
        ? 90 + Math.floor(next() * 10) + 0.00001 * (1 + Math.floor(next() * 9))
        : 90 + Math.floor(next() * 40) / 4;
    const time = roll > 0.97 ? TIME_EPOCH_MS - 1_000 * Math.floor(next() * 3) : T0 + 1_000 * Math.floor(next() * 5);
    const uid = roll > 0.94 && roll <= 0.97 ? 2 ** 32 + Math.floor(next() * 50) : Math.floor(next() * 3_000);
    return [-acc, time, uid];
  }

  it('agrees with a sorted array, packed and wide keys mixed, through inserts, deletes and positions', () => {
    const next = random(9);
    const set = new RankKeySet(CHART_KEY_CODEC);
    const reference: RankKey[] = [];
    const mismatches: string[] = [];
    for (let step = 0; step < 30_000; step++) {
      const key = chartKey(next);
      const at = lowerBound(reference, key);
      const present = at < reference.length && compareKeys(reference[at], key) === 0;
      if (next() < 0.3 && reference.length > 0) {
        const victim = reference[Math.floor(next() * reference.length)];
        reference.splice(lowerBound(reference, victim), 1);
        if (!set.delete(...victim)) mismatches.push(`delete ${victim.join()} at ${step}`);
      } else {
        if (!present) reference.splice(at, 0, key);
        if (set.insert(...key) === present) mismatches.push(`insert ${key.join()} at ${step}`);
      }
      if (step % 89 === 0) {
        const probe = chartKey(next);
        if (set.countBelow(...probe) !== lowerBound(reference, probe)) mismatches.push(`countBelow ${probe.join()}`);
        const from = Math.floor(next() * (reference.length + 10)) - 5;
        if (compareLists(set.slice(from, from + 25), reference.slice(Math.max(0, from), Math.max(0, from + 25))))
          mismatches.push(`slice ${from} at ${step}`);
      }
    }
    expect(mismatches).toEqual([]);
    expect(set.wideSize).toBeGreaterThan(100);
    expect(set.size).toBe(reference.length);
    expect(compareLists([...set.keys()], reference)).toBe(false);
    for (let i = 0; i < reference.length; i += 41) {
      expect(set.countBelow(...reference[i])).toBe(i);
      expect(compareKeys(set.at(i) as RankKey, reference[i])).toBe(0);
      expect(set.has(...reference[i])).toBe(true);
    }
    expect(set.at(reference.length)).toBeNull();

    const dropped = new Set(reference.filter((_, i) => i % 3 === 0).map((key) => key[2]));
    const removed = set.removeUids((uid) => dropped.has(uid));
    const kept = reference.filter((key) => !dropped.has(key[2]));
    expect(removed).toBe(reference.length - kept.length);
    expect(compareLists([...set.keys()], kept)).toBe(false);
  });

  it('builds from sorted rows as inserting them does, the wide keys included', () => {
    const next = random(13);
    const keys = Array.from({ length: 4_000 }, () => chartKey(next)).sort(compareKeys);
    const distinct = keys.filter((key, i) => i === 0 || compareKeys(keys[i - 1], key) !== 0);
    const builder = new RankKeySetBuilder(CHART_KEY_CODEC);
    const inserted = new RankKeySet(CHART_KEY_CODEC);
    for (const key of distinct) {
      builder.append(...key);
      inserted.insert(...key);
    }
    const built = builder.finish();
    expect(built.wideSize).toBeGreaterThan(0);
    expect(compareLists([...built.keys()], [...inserted.keys()])).toBe(false);
    // Blocks of LOAD_FILL keys in MAX_BLOCK-key buffers, the last one too when it holds half a
    // block or more (else room for an eighth more, at least 8), and the wide keys at 24 bytes.
    const packed = distinct.length - built.wideSize;
    const last = packed % LOAD_FILL;
    const lastKeys = last === 0 ? 0 : last >= MAX_BLOCK / 2 ? MAX_BLOCK : last + Math.max(8, last >>> 3);
    expect(built.bytes).toBe((Math.floor(packed / LOAD_FILL) * MAX_BLOCK + lastKeys) * 12 + built.wideSize * 24);
  });

  it('answers the site order with the numbers the callers use (−ATP·10⁴, 0, uid)', () => {
    const set = new RankKeySet(SITE_KEY_CODEC);
    set.insert(-117_500, 0, 5);
    set.insert(-117_500, 0, 3);
    set.insert(-0, 0, 9);
    set.insert(-200_000, 0, 2 ** 40); // a uid that does not pack
    expect([...set.keys()]).toEqual([
      [-200_000, 0, 2 ** 40],
      [-117_500, 0, 3],
      [-117_500, 0, 5],
      [-0, 0, 9],
    ]);
    expect(set.countBelow(-117_500, 0, 4)).toBe(2);
    expect(set.countBelow(0, 0, 9)).toBe(3);
    expect(set.has(0, 0, 9)).toBe(true);
  });
});

/** true when the lists differ (compared as numbers, so −0 equals 0). */
function compareLists(actual: RankKey[], expected: RankKey[]): boolean {
  return actual.length !== expected.length || actual.some((key, i) => compareKeys(key, expected[i]) !== 0);
}
