import { BlockFenwick } from './block-fenwick';

/**
 * A set of keys (a, b, c) — three numbers compared in that order, ascending — that answers "how
 * many keys are below this one" in O(log n).
 *
 * Layout: sorted blocks of at most 512 keys, each a Float64Array of consecutive triples (24 bytes
 * a key, no object per key, so a million keys cost about 32 MB), plus a Fenwick tree over the
 * block sizes. A lookup binary-searches the block ends, then inside the block; the keys below are
 * the Fenwick prefix of the earlier blocks plus the position in the block: O(log n). An insert or
 * delete shifts at most one block (≤ 512 keys); a block that grows past 512 splits in two and an
 * empty one is dropped, both rebuilding the Fenwick tree (O(n / 512), once per ~256 inserts).
 */
const MAX_BLOCK = 512;
const INITIAL_CAPACITY = 8;

export class OrderStatisticSet {
  /**
   * Builds a set from keys given as consecutive triples in any order (duplicates kept once), in
   * O(n log n) with no per-key shifting: how an index is loaded at start-up. Blocks are filled to
   * half their capacity, so the first inserts after loading rarely split.
   */
  static fromTriples(triples: Float64Array): OrderStatisticSet {
    const set = new OrderStatisticSet();
    const count = triples.length / 3;
    const order = new Uint32Array(count);
    for (let i = 0; i < count; i++) order[i] = i;
    order.sort((x, y) => {
      const a = triples[x * 3] - triples[y * 3];
      if (a !== 0) return a;
      const b = triples[x * 3 + 1] - triples[y * 3 + 1];
      return b !== 0 ? b : triples[x * 3 + 2] - triples[y * 3 + 2];
    });
    const fill = MAX_BLOCK >>> 1;
    let block: Float64Array | null = null;
    let used = 0;
    let previous = -1;
    for (let i = 0; i < count; i++) {
      const at = order[i] * 3;
      if (previous >= 0 && compareAt(triples, previous, triples[at], triples[at + 1], triples[at + 2]) === 0) continue;
      previous = order[i];
      if (!block || used === fill) {
        block = new Float64Array((MAX_BLOCK + 1) * 3);
        set.blocks.push(block);
        set.counts.push(0);
        used = 0;
      }
      block.set(triples.subarray(at, at + 3), used * 3);
      used++;
      set.counts[set.counts.length - 1] = used;
      set.total++;
    }
    set.tree.rebuild(set.counts);
    return set;
  }

  private blocks: Float64Array[] = [];
  private counts: number[] = [];
  /** Fenwick tree over `counts`. */
  private readonly tree = new BlockFenwick();
  private total = 0;

  get size(): number {
    return this.total;
  }

  /** Number of keys strictly below (a, b, c). */
  countBelow(a: number, b: number, c: number): number {
    const block = this.blockFor(a, b, c);
    if (block < 0) return this.total;
    return this.tree.prefix(block) + this.lowerBound(block, a, b, c);
  }

  has(a: number, b: number, c: number): boolean {
    const block = this.blockFor(a, b, c);
    if (block < 0) return false;
    const pos = this.lowerBound(block, a, b, c);
    return pos < this.counts[block] && this.equalsAt(block, pos, a, b, c);
  }

  /** Adds the key; false when it was there already. */
  insert(a: number, b: number, c: number): boolean {
    if (this.blocks.length === 0) {
      this.blocks.push(new Float64Array(INITIAL_CAPACITY * 3));
      this.counts.push(0);
      this.tree.rebuild(this.counts);
    }
    let block = this.blockFor(a, b, c);
    if (block < 0) block = this.blocks.length - 1;
    const count = this.counts[block];
    const pos = this.lowerBound(block, a, b, c);
    if (pos < count && this.equalsAt(block, pos, a, b, c)) return false;

    let data = this.blocks[block];
    if ((count + 1) * 3 > data.length) {
      const grown = new Float64Array(Math.min(Math.max(data.length * 2, INITIAL_CAPACITY * 3), (MAX_BLOCK + 1) * 3));
      grown.set(data.subarray(0, count * 3));
      this.blocks[block] = data = grown;
    }
    data.copyWithin((pos + 1) * 3, pos * 3, count * 3);
    data[pos * 3] = a;
    data[pos * 3 + 1] = b;
    data[pos * 3 + 2] = c;
    this.counts[block] = count + 1;
    this.total++;
    if (count + 1 > MAX_BLOCK) this.split(block);
    else this.tree.add(block, 1);
    return true;
  }

  /** Removes the key; false when it was not there. */
  delete(a: number, b: number, c: number): boolean {
    const block = this.blockFor(a, b, c);
    if (block < 0) return false;
    const count = this.counts[block];
    const pos = this.lowerBound(block, a, b, c);
    if (pos >= count || !this.equalsAt(block, pos, a, b, c)) return false;
    const data = this.blocks[block];
    data.copyWithin(pos * 3, (pos + 1) * 3, count * 3);
    this.counts[block] = count - 1;
    this.total--;
    if (count - 1 === 0 && this.blocks.length > 1) {
      this.blocks.splice(block, 1);
      this.counts.splice(block, 1);
      this.tree.rebuild(this.counts);
    } else {
      this.tree.add(block, -1);
    }
    return true;
  }

  clear(): void {
    this.blocks = [];
    this.counts = [];
    this.tree.rebuild(this.counts);
    this.total = 0;
  }

  /** The key at `position` (0-based, in order), or null outside 0 … size − 1: O(log n). */
  at(position: number): [number, number, number] | null {
    return this.slice(position, position + 1)[0] ?? null;
  }

  /**
   * The keys at positions start … end − 1 (clamped to the set), in order: a descent of the
   * Fenwick tree finds the block of `start` in O(log n), then the keys are copied block by block.
   */
  slice(start: number, end: number): Array<[number, number, number]> {
    const from = Math.max(0, Math.floor(start));
    const to = Math.min(this.total, Math.floor(end));
    const keys: Array<[number, number, number]> = [];
    if (from >= to) return keys;
    let [block, offset] = this.tree.locate(from);
    for (let left = to - from; left > 0; block++, offset = 0) {
      const data = this.blocks[block];
      const stop = Math.min(this.counts[block], offset + left);
      for (let i = offset; i < stop; i++) keys.push([data[i * 3], data[i * 3 + 1], data[i * 3 + 2]]);
      left -= stop - offset;
    }
    return keys;
  }

  /** Every key in order (tests and diagnostics). */
  *keys(): IterableIterator<[number, number, number]> {
    for (let block = 0; block < this.blocks.length; block++) {
      const data = this.blocks[block];
      for (let i = 0; i < this.counts[block]; i++) yield [data[i * 3], data[i * 3 + 1], data[i * 3 + 2]];
    }
  }

  /** The first block whose last key is ≥ (a, b, c), or -1 when every key is below it. */
  private blockFor(a: number, b: number, c: number): number {
    let lo = 0;
    let hi = this.blocks.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      const count = this.counts[mid];
      if (count === 0 || compareAt(this.blocks[mid], count - 1, a, b, c) < 0) lo = mid + 1;
      else hi = mid;
    }
    return lo < this.blocks.length ? lo : -1;
  }

  /** Position of the first key ≥ (a, b, c) inside the block. */
  private lowerBound(block: number, a: number, b: number, c: number): number {
    const data = this.blocks[block];
    let lo = 0;
    let hi = this.counts[block];
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (compareAt(data, mid, a, b, c) < 0) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }

  private equalsAt(block: number, pos: number, a: number, b: number, c: number): boolean {
    return compareAt(this.blocks[block], pos, a, b, c) === 0;
  }

  private split(block: number): void {
    const data = this.blocks[block];
    const count = this.counts[block];
    const half = count >>> 1;
    const upper = new Float64Array((MAX_BLOCK + 1) * 3);
    upper.set(data.subarray(half * 3, count * 3));
    this.blocks.splice(block + 1, 0, upper);
    this.counts.splice(block + 1, 0, count - half);
    this.counts[block] = half;
    this.tree.rebuild(this.counts);
  }
}

function compareAt(data: Float64Array, pos: number, a: number, b: number, c: number): number {
  const offset = pos * 3;
  const x = data[offset];
  if (x !== a) return x < a ? -1 : 1;
  const y = data[offset + 1];
  if (y !== b) return y < b ? -1 : 1;
  const z = data[offset + 2];
  if (z !== c) return z < c ? -1 : 1;
  return 0;
}
