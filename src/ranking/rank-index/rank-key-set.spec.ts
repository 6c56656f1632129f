import { bufferWords, FULL_WORDS, HEADER, LOAD_KEYS, MAX_KEYS, moveBits } from './compact-block';
import { CompactKeySet } from './compact-key-set';
import { CompactKeySetBuilder, repacked } from './compact-key-set-builder';
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

describe('moveBits', () => {
  it('copies any bit range up or down, overlapping or not, as a bit-by-bit copy does, and touches nothing else', () => {
    const next = random(17);
    const bit = (data: Uint32Array, at: number) => (data[at >>> 5] >>> (at & 31)) & 1;
    const mismatches: string[] = [];
    for (let trial = 0; trial < 3_000; trial++) {
      const data = Uint32Array.from({ length: 12 }, () => Math.floor(next() * 2 ** 32));
      const bits = data.length * 32;
      const length = Math.floor(next() * (trial % 3 === 0 ? 40 : 300));
      const from = Math.floor(next() * (bits - length));
      const to = Math.floor(next() * (bits - length));
      const before = [...Array(bits).keys()].map((at) => bit(data, at));
      const expected = [...before];
      for (let i = 0; i < length; i++) expected[to + i] = before[from + i];
      moveBits(data, from, to, length);
      const actual = [...Array(bits).keys()].map((at) => bit(data, at));
      if (actual.join('') !== expected.join('')) mismatches.push(`from ${from} to ${to} length ${length}`);
    }
    expect(mismatches).toEqual([]);
  });
});

describe('CompactKeySet', () => {
  /** Compares the set with a sorted array of word triples through random inserts, deletes and probes. */
  function differential(seed: number, make: (next: () => number) => number[], steps: number) {
    const next = random(seed);
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
    for (let step = 0; step < steps; step++) {
      const key = make(next);
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
        const probe = make(next);
        if (set.countBelow(probe[0], probe[1], probe[2]) !== position(probe)) mismatches.push(`countBelow at ${step}`);
        if (set.has(probe[0], probe[1], probe[2]) !== (compareWords(reference[position(probe)] ?? [-1], probe) === 0))
          mismatches.push(`has at ${step}`);
      }
    }
    expect(mismatches).toEqual([]);
    expect(set.size).toBe(reference.length);
    expect([...set.keys()]).toEqual(reference);
    expect(set.slice(500, 2_600)).toEqual(reference.slice(500, 2_600));
    expect(set.slice(reference.length - 3, reference.length + 9)).toEqual(reference.slice(reference.length - 3));
    for (let i = 0; i < reference.length; i += 37)
      expect(set.countBelow(reference[i][0], reference[i][1], reference[i][2])).toBe(i);
    expect(set.blockCounts().reduce((sum, count) => sum + count, 0)).toBe(reference.length);
    return set;
  }

  it('agrees with a sorted array through random inserts and deletes across block splits (keys of few bits)', () => {
    const set = differential(
      42,
      (next) => [Math.floor(next() * 50), Math.floor(next() * 20), Math.floor(next() * 5_000)],
      30_000,
    );
    expect(set.blockCounts().length).toBeGreaterThan(3); // several splits happened
  });

  it('agrees with a sorted array when keys of every width meet in a block (hand-offs, widening, splits)', () => {
    const word = (next: () => number) => Math.floor(next() * 2 ** 32);
    const set = differential(
      7,
      (next) => {
        const roll = next();
        // Mostly close keys (a chart's), some anywhere in the 96 bits, some on the fields' edges.
        if (roll < 0.7) return [4096 * (1_000 + Math.floor(next() * 8)), word(next), Math.floor(next() * 3_000)];
        if (roll < 0.9) return [word(next), word(next), word(next)];
        return [next() < 0.5 ? 0 : 2 ** 32 - 1, next() < 0.5 ? 0 : 2 ** 32 - 1, next() < 0.5 ? 0 : 2 ** 32 - 1];
      },
      40_000,
    );
    expect(set.blockCounts().length).toBeGreaterThan(10);
  });

  it('packs network-like chart keys in about 8 bytes a key, blocks of a whole buffer but the last', () => {
    const next = random(3);
    const keys: RankKey[] = [];
    for (let i = 0; i < 20_000; i++) {
      // Two-decimal percentages 80–100, plays over 115 days, uids of a million players.
      // As the plugin's JSON gives them: the double nearest to the decimal (so each one packs).
      const acc = next() < 0.15 ? 100 : (8_000 + Math.floor(next() * 2_000)) / 100;
      keys.push([-acc, T0 + Math.floor(next() * 1e10), 1 + Math.floor(next() * 1_000_000)]);
    }
    keys.sort(compareKeys);
    const builder = new RankKeySetBuilder(CHART_KEY_CODEC);
    for (const [i, key] of keys.entries()) if (i === 0 || compareKeys(keys[i - 1], key) !== 0) builder.append(...key);
    const set = builder.finish();
    const { compact } = set.parts();
    expect(set.wideSize).toBe(0);
    // 6 bits of acc (in steps of 0.01 %), 34 of time, 20 of uid, in blocks packed to 97 %.
    const bytesPerKey = set.bytes / set.size;
    expect(bytesPerKey).toBeGreaterThan(7.5);
    expect(bytesPerKey).toBeLessThan(8.25); // 12 unpacked
    const buffers = compact.buffers().map((buffer) => buffer.byteLength);
    expect(buffers.slice(0, -1).every((bytes) => bytes === FULL_WORDS * 4)).toBe(true);
    expect(compact.blockCounts().every((count) => count <= LOAD_KEYS)).toBe(true);
    expect(
      compareLists(
        [...set.keys()],
        keys.filter((key, i) => i === 0 || compareKeys(keys[i - 1], key) !== 0),
      ),
    ).toBe(false);
  });

  it('builds blocks from sorted keys, a small last block sized to it, and keeps working after', () => {
    const builder = new CompactKeySetBuilder();
    // (0, i, 1000·i): 10 + 20 bits a key, so a block holds LOAD_KEYS (945 words and the header),
    // in a whole buffer; 17 left over.
    const count = 10 * LOAD_KEYS + 17;
    for (let i = 0; i < count; i++) builder.append(0, i, 1_000 * i);
    const set = builder.finish();
    expect(set.size).toBe(count);
    expect(set.blockCounts()).toEqual([...Array<number>(10).fill(LOAD_KEYS), 17]);
    // The last: 17 keys of 5 + 14 bits (11 words) and the header, plus 16 words of room.
    expect(set.bytes).toBe(10 * FULL_WORDS * 4 + (HEADER + 11 + 16) * 4);
    expect(set.countBelow(0, 1_600, 1_600_000)).toBe(1_600);
    expect(set.insert(0, 1_600, 1_600_000)).toBe(false);
    expect(set.insert(0, 15, 15_001)).toBe(true); // between (0, 15, 15000) and (0, 16, 16000)
    expect(set.countBelow(0, 15, 15_001)).toBe(16);
    expect(set.countBelow(0, 16, 16_000)).toBe(17);
    expect(set.slice(15, 18)).toEqual([
      [0, 15, 15_000],
      [0, 15, 15_001],
      [0, 16, 16_000],
    ]);
  });

  describe('a full block', () => {
    /** `count` keys over the even second words, uids spread over 32 bits (43 bits a key: loaded blocks take whole buffers). */
    const key = (i: number) => [0, 2 * i, Math.imul(i + 1, 2_654_435_761) >>> 0] as const;
    const loaded = (count: number) => {
      const builder = new CompactKeySetBuilder();
      for (let i = 0; i < count; i++) builder.append(...key(i));
      return builder.finish();
    };
    /** Inserts odd keys just after even key `at` (uid 1: inside every block's uid range) until the block count changes. */
    const fill = (set: CompactKeySet, at: number, steps: Array<{ counts: number[]; buffers: ArrayBufferLike[] }>) => {
      const blocks = set.blockCounts().length;
      for (let i = 1; set.blockCounts().length === blocks && i < 2_000; i++) {
        expect(set.insert(0, 2 * at + 1, i)).toBe(true);
        steps.push({ counts: set.blockCounts(), buffers: set.buffers() });
      }
    };
    const sorted = (set: CompactKeySet) =>
      [...set.keys()].every((k, i, keys) => i === 0 || compareWords(keys[i - 1], k) < 0);
    /** The same buffer objects in the same order (toEqual would compare two ArrayBuffers as equal whatever they hold). */
    const same = (actual: ArrayBufferLike[], expected: ArrayBufferLike[]) =>
      actual.length === expected.length && actual.every((buffer, i) => buffer === expected[i]);

    it('fills its room in place, then hands keys to the next block, and splits only when both are full, keeping its buffer', () => {
      const set = loaded(2_000);
      const before = set.buffers();
      const loadedCounts = set.blockCounts();
      expect(
        before.every((buffer) => buffer.byteLength === FULL_WORDS * 4 || buffer === before[before.length - 1]),
      ).toBe(true);
      expect(loadedCounts.length).toBe(3);
      const steps: Array<{ counts: number[]; buffers: ArrayBufferLike[] }> = [];
      fill(set, 10, steps); // inside the first block
      const handed = steps.findIndex((step) => step.counts[1] > loadedCounts[1]);
      const split = steps.length - 1;
      // Room in place first: the first block grows, nothing else changes.
      expect(handed).toBeGreaterThan(5);
      for (const step of steps.slice(0, handed)) {
        expect(step.counts.slice(1)).toEqual(loadedCounts.slice(1));
        expect(same(step.buffers, before)).toBe(true);
      }
      // Then the next block takes the first one's last key at every insert, in the same buffers.
      expect(steps[handed].counts[0]).toBe(steps[handed - 1].counts[0]);
      for (const step of steps.slice(handed, split)) expect(same(step.buffers, before)).toBe(true);
      // When the next is full too (the previous does not exist), the block splits in halves: its
      // lower half stays in its buffer, the upper one takes a new one sized to it (bufferWords).
      const { counts, buffers } = steps[split];
      expect(counts.length).toBe(4);
      expect(Math.abs(counts[0] - counts[1])).toBeLessThanOrEqual(1);
      expect(counts.slice(2)).toEqual(steps[split - 1].counts.slice(1));
      expect(same([buffers[0], ...buffers.slice(2)], before)).toBe(true);
      expect(before).not.toContain(buffers[1]);
      expect(buffers[1].byteLength).toBeLessThanOrEqual(FULL_WORDS * 4);
      expect(sorted(set)).toBe(true);
      expect(set.size).toBe(2_000 + steps.length);
      // The keys that moved answer their place from the next block.
      const last = loadedCounts[0] - 1;
      expect(set.has(...key(last))).toBe(true);
      expect(set.countBelow(...key(last))).toBe(last + steps.length);
    });

    it('hands its first key to the previous block when only that one has room', () => {
      const set = loaded(2_000);
      const loadedCounts = set.blockCounts();
      const steps: Array<{ counts: number[]; buffers: ArrayBufferLike[] }> = [];
      fill(set, 1_999, steps); // inside the last block, after its last key
      const first = loadedCounts[0] + loadedCounts[1];
      // The last block was sized to its keys: it grows into a whole buffer, then hands keys back.
      const handed = steps.findIndex((step) => step.counts[1] > loadedCounts[1]);
      expect(handed).toBeGreaterThan(0);
      expect(steps[handed].counts[0]).toBe(loadedCounts[0]);
      expect(set.has(...key(first))).toBe(true);
      expect(set.countBelow(...key(first))).toBe(first);
      expect(sorted(set)).toBe(true);
    });

    it('splits a small block whose new key widens it past its buffer into whole buffers as needed', () => {
      const set = new CompactKeySet();
      for (let i = 0; i < MAX_KEYS; i++) expect(set.insert(0, i, 0)).toBe(true); // 10 bits a key, one small buffer
      expect(set.blockCounts()).toEqual([MAX_KEYS]);
      const small = set.bytes;
      expect(small).toBeLessThan((FULL_WORDS * 4) / 2);
      expect(set.insert(0, 5, 2 ** 32 - 1)).toBe(true); // a third field of 32 bits, in the lower half
      expect(set.insert(2 ** 32 - 1, 2 ** 32 - 1, 2 ** 32 - 1)).toBe(true); // 96 bits
      expect(set.blockCounts().reduce((sum, count) => sum + count, 0)).toBe(MAX_KEYS + 2);
      expect(set.blockCounts().length).toBeGreaterThan(1);
      expect(sorted(set)).toBe(true);
      expect(set.countBelow(0, 6, 0)).toBe(7);
      expect(set.countBelow(2 ** 32 - 1, 2 ** 32 - 1, 2 ** 32 - 1)).toBe(MAX_KEYS + 1);
    });
  });

  it('grows a small block by an eighth until it needs half a whole buffer, then gives it one', () => {
    const set = new CompactKeySet();
    const sizes: number[] = [];
    const inserted = 1_000; // (0, i, 2^32 − 1 − i): n keys take 2 · bitLength(n − 1) bits each
    for (let i = 0; i < inserted; i++) {
      set.insert(0, i, 2 ** 32 - 1 - i);
      if (sizes[sizes.length - 1] !== set.bytes) sizes.push(set.bytes);
    }
    const expected = [HEADER + 16]; // the empty block's buffer
    for (let n = 1; n <= inserted; n++) {
      const need = HEADER + Math.ceil((n * 2 * (32 - Math.clz32(n - 1))) / 32);
      if (need > expected[expected.length - 1]) expected.push(bufferWords(need));
    }
    expect(sizes.map((bytes) => bytes / 4)).toEqual(expected);
    expect(expected.slice(0, 4)).toEqual([22, 39, 56, 73]); // the need (23, 40, 57) plus 16 words while small
    expect(expected[expected.length - 1]).toBe(FULL_WORDS);
    expect(expected[expected.length - 2]).toBeLessThan(FULL_WORDS / 2 + FULL_WORDS / 16);
    expect([...set.keys()]).toEqual(Array.from({ length: inserted }, (_, i) => [0, i, 2 ** 32 - 1 - i]));
  });

  it('refuses keys appended out of order or twice', () => {
    const builder = new CompactKeySetBuilder();
    builder.append(1, 2, 3);
    expect(() => builder.append(1, 2, 3)).toThrow('rank keys out of order');
    expect(() => builder.append(1, 1, 9)).toThrow('rank keys out of order');
  });

  it('removes the keys of given uids in one pass, dropping emptied blocks', () => {
    const builder = new CompactKeySetBuilder();
    for (let i = 0; i < 5 * LOAD_KEYS; i++) builder.append(0, i, i < LOAD_KEYS ? 7 : i % 5);
    const set = builder.finish();
    const removed = set.removeWhereThird((uid) => uid === 7 || uid === 3);
    const expected = [...Array(5 * LOAD_KEYS).keys()].filter((i) => i >= LOAD_KEYS && i % 5 !== 3);
    expect(removed).toBe(5 * LOAD_KEYS - expected.length);
    expect(set.blockCounts().length).toBe(4);
    expect([...set.keys()]).toEqual(expected.map((i) => [0, i, i % 5]));
    expect(set.countBelow(0, expected[100], 0)).toBe(100);
    expect(set.insert(0, 0, 7)).toBe(true);
    expect(set.slice(0, 2)).toEqual([
      [0, 0, 7],
      [0, expected[0], expected[0] % 5],
    ]);
  });

  /** What a snapshot keeps of a set: each block's words copied into a buffer of its size (as the reader allocates), and its key count. */
  const packedCopy = (set: CompactKeySet) => {
    const blocks: Uint32Array[] = [];
    const counts: number[] = [];
    for (const [count, words] of set.packedBlocks()) {
      const copy = new Uint32Array(bufferWords(words.length));
      copy.set(words);
      blocks.push(copy);
      counts.push(count);
    }
    return { blocks, counts };
  };

  it('gives its blocks as they are in memory, from which the same set reads back, and refuses a damaged one', () => {
    const next = random(11);
    const set = new CompactKeySet();
    for (let i = 0; i < 5_000; i++) set.insert(Math.floor(next() * 2 ** 32), Math.floor(next() * 2 ** 32), i);
    for (let i = 0; i < 1_000; i++) set.delete(...set.slice(i * 3, i * 3 + 1)[0]);
    const { blocks, counts } = packedCopy(set);
    expect(counts).toEqual(set.blockCounts());
    const read = CompactKeySet.fromPacked(blocks, counts);
    expect([...read.keys()]).toEqual([...set.keys()]);
    expect(read.insert(1, 2, 3)).toBe(true);
    expect(read.countBelow(1, 2, 4)).toBe(set.countBelow(1, 2, 4) + 1);
    expect(() => CompactKeySet.fromPacked([blocks[0]], [MAX_KEYS + 1])).toThrow('a damaged block');
    const damaged = blocks[1].slice();
    damaged[4] = 45 << 8; // a second field of 45 bits
    expect(() => CompactKeySet.fromPacked([damaged], [counts[1]])).toThrow('a damaged block');
  });

  it('packs its keys afresh as a load does, after splits left its blocks part empty, and stays as it was', () => {
    const next = random(5);
    // A chart's keys (two-decimal accs, times over months, uids of a million players), loaded, then 30 % more inserted.
    const key = () => [
      4096 * (1_000 + Math.floor(next() * 200)),
      Math.floor(next() * 2 ** 32),
      1 + Math.floor(next() * 1e6),
    ];
    const sorted = Array.from({ length: 20_000 }, key).sort(compareWords);
    const builder = new CompactKeySetBuilder();
    sorted.forEach((k, i) => {
      if (i === 0 || compareWords(sorted[i - 1], k) !== 0) builder.append(k[0], k[1], k[2]);
    });
    const set = builder.finish();
    const loadedBytesPerKey = set.bytes / set.size;
    for (let i = 0; i < 6_000; i++) set.insert(...(key() as [number, number, number]));
    const grown = set.bytes / set.size;
    expect(grown).toBeGreaterThan(loadedBytesPerKey * 1.05);
    const keys = [...set.keys()];
    const counts = set.blockCounts();

    const repackedSet = repacked(set);
    expect([...repackedSet.keys()]).toEqual(keys);
    expect(repackedSet.bytes / repackedSet.size).toBeLessThan(loadedBytesPerKey * 1.02);
    expect(repackedSet.blockCounts().length).toBeLessThan(counts.length);
    expect([...set.keys()]).toEqual(keys);
    expect(set.blockCounts()).toEqual(counts);
    // What a snapshot writes of it reads back as the same keys, and takes inserts.
    const { blocks, counts: written } = packedCopy(repackedSet);
    const read = CompactKeySet.fromPacked(blocks, written);
    expect([...read.keys()]).toEqual(keys);
    expect(read.insert(4096 * 1_000, 0, 0)).toBe(true);
    expect(read.countBelow(4096 * 1_000, 0, 1)).toBe(1);
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
    // The compact blocks' buffers, and the wide keys at 24 bytes.
    const { compact } = built.parts();
    expect(built.bytes).toBe(compact.bytes + built.wideSize * 24);
    expect(compact.size).toBe(distinct.length - built.wideSize);
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
